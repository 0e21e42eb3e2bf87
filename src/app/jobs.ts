import { payoutPasses } from '../payouts';
import { dataTaskPass } from '../data-tasks/data-task.job';
import { refundAttemptsPass } from '../refunds/refund-attempts.job';
import { topics } from '../platform/live/topics';
import type { Services } from './services';

/**
 * The scheduler's periodic passes, in the order they run on the instance holding the lease (docs/money.md, "The
 * reconciler"): payouts, then data tasks, then refund attempts.
 */
export function registerJobs(services: Services): void {
  const { live, config, logger } = services;
  for (const pass of payoutPasses({ payouts: services.payoutService, ledger: services.payoutLedger, approvalExpiryMs: config.money.payoutApprovalExpiryMs })) {
    live.scheduler.addPass(pass);
  }
  live.scheduler.addPass(
    dataTaskPass({
      tasks: live.dataTasks,
      data: services.data,
      connections: services.connections,
      userTokens: services.userTokens,
      publish: (taskId, snapshot) => live.bus.publish(topics.dataTask(taskId), snapshot),
      webhookGraceMs: config.money.dataTaskWebhookGraceMs,
      resultsMaxBytes: config.dataTasks.resultsMaxBytes,
    }),
  );
  live.scheduler.addPass(refundAttemptsPass({ services, logger: logger.child({ job: 'reconciler' }), callOptions: () => ({ requestId: 'reconciler' }) }));
}
