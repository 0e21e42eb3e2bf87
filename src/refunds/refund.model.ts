import type { ProviderRefund, ProviderRefundStatus } from '../platform/provider/provider-types';
import { UpstreamError } from '../platform/errors/gateway-errors';
import { ProviderResponseError } from '../platform/provider/provider-errors';
import { lifecycle, type StatusOf } from '../platform/lifecycle/lifecycle';

/** How far along a refund is, by stage: EXECUTED and FAILED are its ends. */
export const refundLifecycle = lifecycle([['PENDING'], ['AUTHORIZED'], ['EXECUTED', 'FAILED']]);

/**
 * The refund domain's own words. Plain strings, so the service, the store and the pass need nothing of GraphQL;
 * the schema's RefundStatus (refund-status.enum.ts) has exactly these values.
 */
export type RefundStatus = StatusOf<typeof refundLifecycle>;

/** A refund as the gateway answers it: the provider's refund, with the payment id it was asked under. */
export interface RefundRecord {
  id: string;
  paymentId: string;
  amountInMinor: number;
  currency: string;
  status: RefundStatus;
  reference: string;
  createdAt: string;
  authorizedAt: string | null;
  executedAt: string | null;
  failureReason: string | null;
}

/** A payment received into the merchant account, as its refund list shows it. */
export interface PaymentRecord {
  id: string;
  /** Oldest first. */
  refunds: RefundRecord[];
  /** Sum of the refunds that have not failed. */
  refundedAmountInMinor: number;
}

/** What refundUpdated subscribers receive: the refund as the provider reports it, with its payment id. */
export interface RefundEvent {
  paymentId: string;
  refund: ProviderRefund;
}

const STATUSES: Readonly<Record<string, RefundStatus>> = {
  pending: 'PENDING',
  authorized: 'AUTHORIZED',
  executed: 'EXECUTED',
  failed: 'FAILED',
};

/** The refund status a provider's word names; undefined for a word the gateway does not know. */
export const refundStatusOf = (word: string): RefundStatus | undefined => (Object.hasOwn(STATUSES, word) ? STATUSES[word] : undefined);

/**
 * A status outside RefundStatus cannot be shown without breaking the contract, so it is an upstream error
 * (UPSTREAM_ERROR, with the provider's value on originalError for the log), not a crash.
 */
function toRefundStatus(status: ProviderRefundStatus, route = 'payments.refund'): RefundStatus {
  const known = refundStatusOf(status);
  if (known) return known;
  throw new UpstreamError(
    'The provider reported a refund status the gateway does not know. Try again later; report it if it persists.',
    {},
    { originalError: new ProviderResponseError(route, 200, { unknownRefundStatus: status }, undefined, undefined) },
  );
}

/** The provider's refund object does not carry its payment id; the caller knows it from the path it asked. */
export function refundFromProvider(source: ProviderRefund, paymentId: string): RefundRecord {
  return {
    id: source.id,
    paymentId,
    amountInMinor: source.amount_in_minor,
    currency: source.currency,
    status: toRefundStatus(source.status),
    reference: source.reference,
    createdAt: source.created_at,
    authorizedAt: source.authorized_at ?? null,
    executedAt: source.executed_at ?? null,
    failureReason: source.failure_reason ?? null,
  };
}

/** Spec: a failed refund gave nothing back, so it does not count towards the total refunded. */
export function refundedAmount(refunds: readonly Pick<RefundRecord, 'status' | 'amountInMinor'>[]): number {
  return refunds.filter((refund) => refund.status !== 'FAILED').reduce((sum, refund) => sum + refund.amountInMinor, 0);
}
