import type { DatabaseLeases } from '../platform/db/database-leases';
import type { Logger } from '../platform/observability/logger';
import { adoptFromProvider, publish, reconcilePending, type MoneyDeps } from '../payouts/payout.workflow';
import type { PayoutRecord } from '../payouts/payout-ledger';
import { EXPIRED } from '../payouts/payout-status';
import type { Services } from './services';
import { traceJob } from '../platform/observability/telemetry';
import { reconcileRefundAttempts } from '../refunds/refund-attempts.pass';

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
        await reconcileRefundAttempts(this.deps, BATCH, () => this.closed);
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
    for (const repair of await this.services.live.dataTasks.reconcile(BATCH, () => this.closed)) this.services.metrics.reconcilerRepair(repair.kind);
  }

  private repaired(kind: string, record: PayoutRecord): void {
    this.services.metrics.reconcilerRepair(kind);
    this.deps.logger.info({ transactionId: record.transactionId, status: record.status, repair: kind }, 'reconciler repaired a payout');
  }
}
