import type { CallOptions } from '../platform/provider/http.client';
import type { Logger } from '../platform/observability/logger';
import type { RefundKeyStore } from './refund-key.store';
import { REFUND_ATTEMPT_GRACE_MS } from './refund-outcome';
import type { RefundService } from './refund.service';

/** A background pass makes its provider calls for no operation: no deadline but the HTTP timeouts. */
const PASS_CALL_OPTIONS: CallOptions = { requestId: 'reconciler' };

export interface RefundAttemptsPassDeps {
  /** Settles one attempt (RefundService.settleQuietAttempt). */
  refunds: Pick<RefundService, 'settleQuietAttempt'>;
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
 * gateway, and nobody has sent them again for REFUND_ATTEMPT_GRACE_MS) are settled by what is certain
 * (refund-outcome.ts). A refund the attempt made is recorded under its key, so a retry at any later time answers it
 * without sending again (`refund_attempt_found`): while the provider surely remembers the key, it is the provider's
 * answer to the attempt sent again under it; past that, the refund matched in the payment's refund list. With no
 * refund listed that it may have made, the provider made nothing under the key and the attempt is forgotten, so a
 * retry sends afresh (`refund_attempt_not_made`). An attempt whose payment's refunds cannot be read now, or whose
 * match another pending attempt may still be answered, is looked at again on the next pass.
 */
export async function reconcileRefundAttempts(deps: RefundAttemptsPassDeps, batch: number, run: RefundPassRun): Promise<void> {
  const { keys, refunds } = deps;
  const sentBefore = keys.now() - REFUND_ATTEMPT_GRACE_MS;
  for (const attempt of await keys.unsettled(sentBefore, batch)) {
    if (run.stopping()) return;
    let outcome;
    try {
      outcome = await refunds.settleQuietAttempt(attempt, sentBefore, PASS_CALL_OPTIONS);
    } catch (error) {
      run.logger.warn({ err: error, paymentId: attempt.paymentId }, 'reconciler could not settle a refund attempt now');
      continue;
    }
    if (outcome.kind === 'left') continue;
    const kind = outcome.kind === 'found' ? 'refund_attempt_found' : 'refund_attempt_not_made';
    run.repaired(kind);
    run.logger.info(
      { paymentId: attempt.paymentId, idempotencyKey: attempt.idempotencyKey, refundId: outcome.kind === 'found' ? outcome.refundId : undefined, repair: kind },
      'reconciler settled a refund attempt',
    );
  }
}
