import type { GatewayContext } from '../platform/graphql/operation-context';
import type { RefundAttempt } from './refund-key.store';
import { refundMadeBy } from './refund-outcome';

/**
 * How long after an attempt was last sent the reconciler leaves it to the request sending it: past the HTTP
 * client's retries and the operation's deadline, whatever the provider made of it is in its refund list.
 */
export const REFUND_ATTEMPT_GRACE_MS = 5 * 60 * 1000;

/**
 * The reconciler's refund pass: refund attempts whose outcome is unknown (the provider's answer never reached the
 * gateway, and nobody has sent them again for REFUND_ATTEMPT_GRACE_MS) are settled from the payment's refund list.
 * A refund the attempt made is recorded under its key, so a retry at any later time answers it without sending
 * again (`refund_attempt_found`); with none, the provider made nothing under the key and the attempt is forgotten,
 * so a retry sends afresh (`refund_attempt_not_made`). An attempt whose payment's refunds cannot be read now is
 * looked at again on the next pass.
 */
export async function reconcileRefundAttempts(
  deps: Pick<GatewayContext, 'services' | 'logger' | 'callOptions'>,
  batch: number,
  closed: () => boolean,
): Promise<void> {
  const { refundKeys, metrics } = deps.services;
  const sentBefore = refundKeys.now() - REFUND_ATTEMPT_GRACE_MS;
  const repaired = (kind: string, attempt: RefundAttempt, refundId?: string) => {
    metrics.reconcilerRepair(kind);
    deps.logger.info({ paymentId: attempt.paymentId, idempotencyKey: attempt.idempotencyKey, refundId, repair: kind }, 'reconciler settled a refund attempt');
  };
  for (const attempt of await refundKeys.unsettled(sentBefore, batch)) {
    if (closed()) return;
    let made;
    try {
      made = await refundMadeBy(deps.services, attempt, deps.callOptions());
    } catch (error) {
      deps.logger.warn({ err: error, paymentId: attempt.paymentId }, 'reconciler could not read the refunds of a payment');
      continue;
    }
    if (made) {
      if (await refundKeys.recordRefund(attempt, made.id, { answered: false, authoritative: false })) repaired('refund_attempt_found', attempt, made.id);
    } else if (await refundKeys.release(attempt, sentBefore)) {
      repaired('refund_attempt_not_made', attempt);
    }
  }
}
