import type { CallOptions } from '../platform/provider/http.client';
import type { PaymentsClient } from '../platform/provider/payments.client';
import type { Logger } from '../platform/observability/logger';
import type { RefundAttempt, RefundKeyStore } from './refund-key.store';
import { refundMadeBy } from './refund-outcome';

/**
 * How long after an attempt was last sent the reconciler leaves it to the request sending it: past the HTTP
 * client's retries and the operation's deadline, whatever the provider made of it is in its refund list.
 */
export const REFUND_ATTEMPT_GRACE_MS = 5 * 60 * 1000;

/** A background pass makes its provider calls for no operation: no deadline but the HTTP timeouts. */
const PASS_CALL_OPTIONS: CallOptions = { requestId: 'reconciler' };

export interface RefundAttemptsPassDeps {
  payments: PaymentsClient;
  /** The key store, whose clock says when an attempt was last sent. */
  keys: RefundKeyStore;
}

/** What the scheduler gives one run of the pass. */
export interface RefundPassRun {
  readonly logger: Logger;
  stopping(): boolean;
  /** Counts one repair (bankgraph_reconciler_repairs_total{kind}). */
  repaired(kind: 'refund_attempt_found' | 'refund_attempt_not_made'): void;
}

/**
 * The reconciler's refund pass: refund attempts whose outcome is unknown (the provider's answer never reached the
 * gateway, and nobody has sent them again for REFUND_ATTEMPT_GRACE_MS) are settled from the payment's refund list.
 * A refund the attempt made is recorded under its key, so a retry at any later time answers it without sending
 * again (`refund_attempt_found`); with none, the provider made nothing under the key and the attempt is forgotten,
 * so a retry sends afresh (`refund_attempt_not_made`). An attempt whose payment's refunds cannot be read now is
 * looked at again on the next pass.
 */
export async function reconcileRefundAttempts(deps: RefundAttemptsPassDeps, batch: number, run: RefundPassRun): Promise<void> {
  const { keys } = deps;
  const sentBefore = keys.now() - REFUND_ATTEMPT_GRACE_MS;
  const repaired = (kind: 'refund_attempt_found' | 'refund_attempt_not_made', attempt: RefundAttempt, refundId?: string) => {
    run.repaired(kind);
    run.logger.info({ paymentId: attempt.paymentId, idempotencyKey: attempt.idempotencyKey, refundId, repair: kind }, 'reconciler settled a refund attempt');
  };
  for (const attempt of await keys.unsettled(sentBefore, batch)) {
    if (run.stopping()) return;
    let made;
    try {
      made = await refundMadeBy(deps, attempt, PASS_CALL_OPTIONS);
    } catch (error) {
      run.logger.warn({ err: error, paymentId: attempt.paymentId }, 'reconciler could not read the refunds of a payment');
      continue;
    }
    if (made) {
      if (await keys.recordRefund(attempt, made.id, { answered: false, authoritative: false })) repaired('refund_attempt_found', attempt, made.id);
    } else if (await keys.release(attempt, sentBefore)) {
      repaired('refund_attempt_not_made', attempt);
    }
  }
}
