import type { PassJob, Scheduler } from '../platform/scheduler/scheduler';

/** Each feature's periodic passes, as its create function made them. */
export interface FeaturePasses {
  payouts: readonly PassJob[];
  dataTasks: readonly PassJob[];
  refunds: readonly PassJob[];
}

/**
 * The scheduler's periodic passes, in the order they run on the instance holding the lease (docs/money.md, "The
 * reconciler"): payouts, then data tasks, then refund attempts. (The features' watches are on the scheduler already:
 * each feature made its own with `scheduler.watches`.)
 */
export function registerJobs(scheduler: Pick<Scheduler, 'addPass'>, passes: FeaturePasses): void {
  for (const pass of [...passes.payouts, ...passes.dataTasks, ...passes.refunds]) scheduler.addPass(pass);
}
