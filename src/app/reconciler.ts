import { DATA_TASK_TTL_MS, resultsTooLarge, type OverdueDataTask } from '../data-tasks/data-task.store';
import { toDataTaskSnapshot } from '../data-tasks/data-task.snapshot';
import { taskBearer } from '../data-tasks/task-bearer';
import type { DatabaseLeases } from '../platform/db/database-leases';
import { NotFoundError } from '../platform/errors/gateway-errors';
import type { Logger } from '../platform/observability/logger';
import { adoptFromProvider, publish, reconcilePending, type MoneyDeps } from '../payouts/payout.workflow';
import type { PayoutRecord } from '../payouts/payout-ledger';
import { EXPIRED } from '../payouts/payout-status';
import { DataTaskStatus } from '../data-tasks/data-task-status.enum';
import type { Services } from './services';
import { traceJob } from '../platform/observability/telemetry';
import { topics } from '../platform/live/topics';
import { reconcileRefundAttempts } from '../refunds';

/** Records looked at per kind per pass: a backlog is worked through over several passes, not in one burst. */
const BATCH = 100;
const LEASE_NAME = 'reconciler';

/**
 * The one background job that repairs what requests and webhooks left unfinished, run by whichever instance holds
 * its database lease (every instance tries on each tick; the lease outlives a tick, so the holder keeps it):
 * - payouts never confirmed by the provider (a crash or a failed call after recording): what the provider has is
 *   stored; past PAYOUT_SUBMISSION_EXPIRY_MS with nothing there, they expire and can never be sent;
 * - payouts the provider confirmed but that are not final: re-read, stored and published when they moved;
 * - payouts awaiting approval for longer than PAYOUT_APPROVAL_EXPIRY_MS: expired (never sent) and published, so a
 *   payout nobody approved does not stay approvable for ever;
 * - data tasks with no webhook DATA_TASK_WEBHOOK_GRACE_MS after they started: the results are fetched by task id
 *   and the task completes (its subscribers with it), or it is marked FAILED with the reason; tasks past
 *   DATA_TASK_TTL_MS are forgotten;
 * - refund attempts whose outcome is unknown: settled from the payment's refund list (./refund-attempts.pass.ts).
 * Each repair is logged and counted (bankgraph_reconciler_repairs_total).
 */
export class Reconciler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  private readonly deps: MoneyDeps;

  constructor(
    private readonly services: Services,
    private readonly leases: DatabaseLeases,
    logger: Logger,
    private readonly intervalMs: number,
  ) {
    // A background job, not an operation: its provider calls have no deadline but their HTTP timeouts.
    this.deps = { services, logger: logger.child({ job: 'reconciler' }), requestId: 'reconciler', callOptions: () => ({ requestId: 'reconciler' }) };
  }

  start(): void {
    if (this.closed || this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  /** One pass if this instance holds (or takes) the lease; false when another instance holds it. */
  async runOnce(): Promise<boolean> {
    if (!(await this.leases.hold(LEASE_NAME, this.intervalMs * 3))) return false;
    try {
      await traceJob(this.services.telemetry, 'reconcile', async () => {
        await this.reconcileUnconfirmed();
        await this.reconcileInFlight();
        await this.expireUnapproved();
        await this.reconcileDataTasks();
        await reconcileRefundAttempts({ payments: this.services.payments, keys: this.services.refundKeys }, BATCH, {
          logger: this.deps.logger,
          stopping: () => this.closed,
          repaired: (kind) => this.services.metrics.reconcilerRepair(kind),
        });
      });
      this.services.metrics.reconcilerRun('ok');
    } catch (error) {
      this.services.metrics.reconcilerRun('error');
      throw error;
    }
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    await this.leases.release(LEASE_NAME).catch(() => undefined);
  }

  private async tick(): Promise<void> {
    if (this.running || this.closed) return;
    this.running = this.runOnce()
      .then(() => undefined)
      .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'reconciler pass failed; the next one retries'))
      .finally(() => {
        this.running = undefined;
      });
    await this.running;
  }

  private async reconcileUnconfirmed(): Promise<void> {
    for (const record of await this.services.payoutLedger.unconfirmed(BATCH)) {
      if (this.closed) return;
      const after = await reconcilePending(this.deps, record);
      if (after.withdrawal) {
        this.repaired('payout_confirmed', after);
        await publish(this.deps, after);
      } else if (after.status === EXPIRED) {
        this.repaired('payout_expired', after);
      }
    }
  }

  private async reconcileInFlight(): Promise<void> {
    for (const record of await this.services.payoutLedger.inFlight(BATCH)) {
      if (this.closed) return;
      const before = JSON.stringify(record.withdrawal);
      const live = await adoptFromProvider(this.deps, record).catch((error: unknown) => {
        this.deps.logger.warn({ err: error, transactionId: record.transactionId }, 'reconciler could not re-read a payout');
        return undefined;
      });
      if (live && JSON.stringify(live) !== before) {
        const updated = await this.services.payoutLedger.get(record.transactionId);
        if (updated) {
          this.repaired('payout_updated', updated);
          await publish(this.deps, updated);
        }
      } else {
        await this.services.payoutLedger.touch(record.transactionId);
      }
    }
  }

  private async expireUnapproved(): Promise<void> {
    const { payoutLedger, config } = this.services;
    for (const record of await payoutLedger.expireAwaitingApproval(config.money.payoutApprovalExpiryMs, BATCH)) {
      this.repaired('payout_approval_expired', record);
      await publish(this.deps, record);
    }
  }

  private async reconcileDataTasks(): Promise<void> {
    const { live, config } = this.services;
    const now = Date.now();
    await live.dataTasks.forgetStartedBefore(now - DATA_TASK_TTL_MS);
    await live.dataTasks.forgetRevokedConnections();
    for (const task of await live.dataTasks.overdue(now - config.money.dataTaskWebhookGraceMs, BATCH)) {
      if (this.closed) return;
      await this.completeDataTask(task);
    }
  }

  private async completeDataTask(task: OverdueDataTask): Promise<void> {
    const { live, data, connections, userTokens, config } = this.services;
    const bearer = await taskBearer(connections, userTokens, task.connectionId);
    if (!bearer) return this.failDataTask(task, 'the bank connection that started it ended before its results could be fetched; start the task again');
    let results: unknown[];
    try {
      results = (await data.taskResults(bearer, task.id, task.request.resource, { requestId: this.deps.requestId })) as unknown[];
    } catch (error) {
      if (error instanceof NotFoundError) return this.failDataTask(task, 'the provider has no such task');
      // Not ready yet, or the provider is unavailable: the next pass asks again.
      this.deps.logger.info({ err: error, taskId: task.id }, 'overdue data task not fetched yet');
      return;
    }
    const kept = await live.dataTasks.putResults(task.id, results, config.dataTasks.resultsMaxBytes);
    if (!kept.stored) return this.failDataTask(task, resultsTooLarge(kept.bytes, config.dataTasks.resultsMaxBytes));
    const at = new Date().toISOString();
    const changed = await live.dataTasks.recordState({
      taskId: task.id,
      status: DataTaskStatus.SUCCEEDED,
      providerStatus: 'succeeded',
      completedAt: at,
      updatedAt: at,
    });
    if (changed) await this.dataTaskRepaired('data_task_completed', task.id);
  }

  private async failDataTask(task: OverdueDataTask, reason: string): Promise<void> {
    const at = new Date().toISOString();
    const changed = await this.services.live.dataTasks.recordState({
      taskId: task.id,
      status: DataTaskStatus.FAILED,
      providerStatus: reason,
      completedAt: at,
      updatedAt: at,
    });
    if (changed) await this.dataTaskRepaired('data_task_failed', task.id, reason);
  }

  private async dataTaskRepaired(kind: string, taskId: string, reason?: string): Promise<void> {
    this.services.metrics.reconcilerRepair(kind);
    this.deps.logger.info({ taskId, repair: kind, reason }, 'reconciler repaired a data task');
    const task = await this.services.live.dataTasks.find(taskId);
    if (task) {
      await this.services.live.bus
        .publish(topics.dataTask(taskId), toDataTaskSnapshot(task))
        .catch((error: unknown) => this.deps.logger.warn({ err: error, taskId }, 'data task change could not be published'));
    }
  }

  private repaired(kind: string, record: PayoutRecord): void {
    this.services.metrics.reconcilerRepair(kind);
    this.deps.logger.info({ transactionId: record.transactionId, status: record.status, repair: kind }, 'reconciler repaired a payout');
  }
}
