import type { CallOptions } from '../platform/provider/http.client';
import type { PaymentsClient } from '../platform/provider/payments.client';
import type { ProviderRefund } from '../platform/provider/provider-types';
import { NotFoundError } from '../platform/errors/gateway-errors';
import type { RefundAttempt, RefundKeyStore } from './refund-key.store';

/** How long the provider remembers an idempotency key from the request it accepted under it (README, Refunds). */
export const PROVIDER_KEY_MEMORY_MS = 24 * 3600 * 1000;

/**
 * What the gateway allows on either side of the provider's 24 hours: the provider's clock against the gateway's,
 * and the time a send takes to be accepted.
 */
export const KEY_MEMORY_MARGIN_MS = 3600 * 1000;

/**
 * How far the provider's clock may be behind the gateway's: a refund created this long before the attempt was
 * first recorded can still be its outcome; one created earlier cannot.
 */
const CLOCK_SKEW_MS = 10 * 60 * 1000;

/**
 * How long after an attempt was last sent the reconciler leaves it to the request sending it: past the HTTP
 * client's retries and the operation's deadline, whatever the provider made of it is in its refund list.
 */
export const REFUND_ATTEMPT_GRACE_MS = 5 * 60 * 1000;

/**
 * True while the provider surely remembers the attempt's key, if it ever accepted a request under it: the key is
 * accepted no earlier than the attempt was recorded, and remembered 24 hours from then. Resending under the key
 * now answers the refund made under it, or makes the one asked for; it cannot make a second.
 */
export function keySurelyRemembered(attempt: Pick<RefundAttempt, 'createdAt'>, now: number): boolean {
  return now < Date.parse(attempt.createdAt) + PROVIDER_KEY_MEMORY_MS - KEY_MEMORY_MARGIN_MS;
}

/**
 * False once the provider has surely forgotten the attempt's key: 24 hours (and the margin) after it was last sent,
 * no send under the key can be answered a refund made before.
 */
export function keyMayBeRemembered(attempt: Pick<RefundAttempt, 'sentAtMs'>, now: number): boolean {
  return now < attempt.sentAtMs + PROVIDER_KEY_MEMORY_MS + KEY_MEMORY_MARGIN_MS;
}

/**
 * Whether the refund could be what the attempt's request made: the same payment and reference, the same amount
 * (any amount when the request asked for the whole payment, whose amount the gateway cannot read), and created no
 * earlier than the attempt was first recorded (less the clock skew allowed).
 */
export function mayHaveMade(attempt: Pick<RefundAttempt, 'paymentId' | 'request' | 'createdAt'>, refund: ProviderRefund): boolean {
  const amount = attempt.request.amount_in_minor;
  return (
    refund.reference === attempt.request.reference &&
    (amount === undefined || refund.amount_in_minor === amount) &&
    Date.parse(refund.created_at) >= Date.parse(attempt.createdAt) - CLOCK_SKEW_MS
  );
}

/** What is known of an attempt's payment: the provider's refund list, and what this gateway stored for it. */
export interface OutcomeEvidence {
  /** The payment's refunds at the provider, read before `others`. */
  refunds: readonly ProviderRefund[];
  /** The payment's other attempts in the store, read after `refunds`: the ones with a refund claim it. */
  others: readonly RefundAttempt[];
}

/** How an attempt whose outcome is unknown is to be settled. */
export type OutcomeDecision =
  /** The provider still knows the key: send again under it, and its answer is the attempt's refund. */
  | { kind: 'ask-provider' }
  /** Past the key's memory, this refund is the attempt's: no attempt the provider could still answer may own it. */
  | { kind: 'adopt'; refund: ProviderRefund }
  /** No refund the attempt may have made is listed: it made none. */
  | { kind: 'not-made' }
  /**
   * Every refund the attempt may have made may also be the outcome of another attempt the provider could still
   * answer; `retryAtMs` is when that is surely settled (the other is resent by the reconciler, or forgotten).
   */
  | { kind: 'undecided'; retryAtMs: number };

/**
 * Settles an attempt from what is certain. Refunds claimed by another attempt are never the attempt's. While the
 * provider surely remembers the key, only its answer under the key counts (a refund listed with the same amount and
 * reference may be another attempt's). Past that, the oldest unclaimed refund the attempt may have made is its
 * own, unless another pending attempt whose key the provider may still remember may have made it too: that one's
 * answer could come later and contradict the match, so the refund is left to it. Pending attempts the provider has
 * forgotten compete for the same refunds first come, first served (the store lets one claim each): any of them may
 * have made any, and each left without one makes its refund afresh.
 */
export function decideOutcome(attempt: RefundAttempt, evidence: OutcomeEvidence, now: number): OutcomeDecision {
  const others = evidence.others.filter((other) => other.idempotencyKey !== attempt.idempotencyKey);
  const claimed = new Set(others.flatMap((other) => (other.refundId === undefined ? [] : [other.refundId])));
  const candidates = evidence.refunds
    .filter((refund) => !claimed.has(refund.id) && mayHaveMade(attempt, refund))
    .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at));
  if (candidates.length === 0) return { kind: 'not-made' };
  if (keySurelyRemembered(attempt, now)) return { kind: 'ask-provider' };

  const rivalsOf = (refund: ProviderRefund) =>
    others.filter((other) => other.refundId === undefined && keyMayBeRemembered(other, now) && mayHaveMade(other, refund));
  const free = candidates.find((refund) => rivalsOf(refund).length === 0);
  if (free) return { kind: 'adopt', refund: free };
  const settledAt = candidates
    .flatMap(rivalsOf)
    .map((rival) =>
      keySurelyRemembered(rival, now) ? rival.sentAtMs + REFUND_ATTEMPT_GRACE_MS : rival.sentAtMs + PROVIDER_KEY_MEMORY_MS + KEY_MEMORY_MARGIN_MS,
    );
  return { kind: 'undecided', retryAtMs: Math.max(now, Math.min(...settledAt)) };
}

/**
 * Reads the evidence for `decideOutcome`: the payment's refund list first, then the store, so a refund listed and
 * recorded meanwhile is seen as claimed. A payment the provider does not know has no refunds.
 */
export async function readOutcomeEvidence(
  deps: { payments: PaymentsClient; keys: RefundKeyStore },
  attempt: RefundAttempt,
  options: CallOptions,
): Promise<OutcomeEvidence> {
  let refunds: ProviderRefund[];
  try {
    refunds = await deps.payments.listRefunds(attempt.paymentId, options);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    refunds = [];
  }
  return { refunds, others: await deps.keys.attemptsOfPayment(attempt.paymentId) };
}
