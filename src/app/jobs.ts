import { payoutPasses } from '../payouts';
import { dataTaskPass } from '../data-tasks';
import { refundAttemptsPass } from '../refunds';
import type { Services } from './services';

/**
 * The scheduler's periodic passes, in the order they run on the instance holding the lease (docs/money.md, "The
 * reconciler"): payouts, then data tasks, then refund attempts.
 */
export function registerJobs(services: Services): void {
  const { live, config } = services;
  for (const pass of payoutPasses({ payouts: services.payoutService, ledger: services.payoutLedger, approvalExpiryMs: config.money.payoutApprovalExpiryMs })) {
    live.scheduler.addPass(pass);
  }
  live.scheduler.addPass(dataTaskPass(live.dataTasks));
  live.scheduler.addPass(refundAttemptsPass({ refunds: services.refunds, keys: services.refundKeys }));
}
