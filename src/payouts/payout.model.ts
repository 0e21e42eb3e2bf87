/**
 * The payout domain's own shapes, as refund.model.ts is the refunds': the service, the store, the policy and the
 * jobs speak these; the provider's withdrawal shapes stop at payout-provider.adapter.ts.
 */

/** Who created a payout: a session's user, or a merchant key (by its id, never the key). */
export type PayoutOwner = { kind: 'user'; userId: string } | { kind: 'merchant'; keyId: string };

/** A payout to send, exactly as it is sent: a retry resends the same request (the provider's idempotency compares it). */
export interface PayoutRequest {
  transactionId: string;
  beneficiaryName: string;
  beneficiaryIban: string;
  beneficiaryReference: string;
  currency: string;
  amountInMinor: number;
  contextCode: 'withdrawal';
}

/** The request's fields in the order they are compared and named in messages. */
export const PAYOUT_REQUEST_FIELDS: readonly (keyof PayoutRequest)[] = [
  'transactionId',
  'beneficiaryName',
  'beneficiaryIban',
  'beneficiaryReference',
  'currency',
  'amountInMinor',
  'contextCode',
];

/**
 * A payout as the provider reported it: the request's fields as the provider holds them, its status word (an open
 * set, payout-status.ts) and when it reached each stage.
 */
export interface ConfirmedPayout extends Omit<PayoutRequest, 'contextCode'> {
  /** As the provider holds it: any word it sends, not only the one the gateway asks for. */
  contextCode: string;
  status: string;
  authorisedAt: string | null;
  submittedAt: string | null;
  settledAt: string | null;
  rejectedAt: string | null;
  failedAt: string | null;
}

/** Who asked for a payout: its owner a user or a merchant key, or an agent (an MCP client) for its owner. */
export type PayoutInitiator = 'USER' | 'MERCHANT' | 'AGENT';

/**
 * What the payouts answer and publish: a payout as it stands (the provider's as last seen, or the request with the
 * gateway's status), and who initiated it when the gateway recorded it (null for one made at the provider directly).
 */
export interface PayoutView extends ConfirmedPayout {
  initiatedBy: PayoutInitiator | null;
  agentName: string | null;
}

/** An agent (an MCP client) asking for a payout on its principal's behalf: its payout always awaits approval. */
export interface PayoutAgent {
  clientName: string;
}

export function ownerKey(owner: PayoutOwner): string {
  return owner.kind === 'user' ? `user:${owner.userId}` : `merchant:${owner.keyId}`;
}

export function sameOwner(a: PayoutOwner, b: PayoutOwner): boolean {
  return ownerKey(a) === ownerKey(b);
}

export function ownerFromKey(key: string): PayoutOwner {
  const separator = key.indexOf(':');
  const kind = key.slice(0, separator);
  const id = key.slice(separator + 1);
  return kind === 'merchant' ? { kind: 'merchant', keyId: id } : { kind: 'user', userId: id };
}

/** Who initiated a payout recorded for `owner`, proposed by the MCP client `agentClient` when one did. */
export function initiatorOf(owner: PayoutOwner, agentClient: string | undefined): Pick<PayoutView, 'initiatedBy' | 'agentName'> {
  if (agentClient !== undefined) return { initiatedBy: 'AGENT', agentName: agentClient };
  return { initiatedBy: owner.kind === 'merchant' ? 'MERCHANT' : 'USER', agentName: null };
}
