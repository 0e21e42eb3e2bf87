import type { CallOptions } from '../platform/provider/http.client';
import type { PaymentsClient } from '../platform/provider/payments.client';
import type { ProviderRefund } from '../platform/provider/provider-types';
import { NotFoundError } from '../platform/errors/gateway-errors';
import type { RefundAttempt, RefundKeyStore } from './refund-key.store';

/**
 * How far the provider's clock may be behind the gateway's: a refund created this long before the attempt was
 * first recorded can still be its outcome; one created earlier cannot.
 */
const CLOCK_SKEW_MS = 10 * 60 * 1000;

/**
 * What the provider made for an attempt whose answer was lost, read from the payment's refund list (the spec's
 * `GET /v3/payments/{id}/refunds`): the oldest refund with the attempt's reference and amount (any amount when the
 * request asked for the whole payment, whose amount the gateway cannot read), created no earlier than the attempt,
 * and not already recorded under another key. Undefined when the list has none (or the provider knows no such
 * payment): the attempt made no refund.
 *
 * What it cannot tell apart: a refund with the same amount and reference made outside the gateway after the
 * attempt, which it takes for the attempt's; two lost attempts of the same request under different keys, which
 * it pairs oldest with oldest (each gets one refund, whichever it was).
 */
export async function refundMadeBy(
  deps: { payments: PaymentsClient; keys: RefundKeyStore },
  attempt: RefundAttempt,
  options: CallOptions,
): Promise<ProviderRefund | undefined> {
  let refunds: ProviderRefund[];
  try {
    refunds = await deps.payments.listRefunds(attempt.paymentId, options);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
  const claimed = await deps.keys.claimedRefundIds(attempt.paymentId);
  const notBefore = Date.parse(attempt.createdAt) - CLOCK_SKEW_MS;
  const amount = attempt.request.amount_in_minor;
  return refunds
    .filter(
      (refund) =>
        !claimed.has(refund.id) &&
        refund.reference === attempt.request.reference &&
        (amount === undefined || refund.amount_in_minor === amount) &&
        Date.parse(refund.created_at) >= notBefore,
    )
    .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at))[0];
}
