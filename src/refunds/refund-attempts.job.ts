import type { PassJob } from '../platform/scheduler/scheduler';
import { reconcileRefundAttempts } from './refund-attempts.pass';

/** Attempts looked at per pass: a backlog is worked through over several passes, not in one burst. */
const BATCH = 100;

/** The refunds' periodic pass: refund attempts whose outcome is unknown, settled from the payment's refund list. */
export function refundAttemptsPass(deps: Parameters<typeof reconcileRefundAttempts>[0]): PassJob {
  return { name: 'refund-attempts', run: (run) => reconcileRefundAttempts(deps, BATCH, run) };
}
