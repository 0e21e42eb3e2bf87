import type { PayoutClient } from '../datasources/payout.client';
import type { ProviderWithdrawal } from '../datasources/provider-types';
import type { Logger } from '../logger';
import { traceJob, type Telemetry } from '../telemetry/telemetry';
import type { EventBus } from './event-bus';
import type { Leases } from './lease';
import { topics } from './topics';
import { FINAL_PAYOUT_STATUSES } from '../payouts/payout-status';

export interface PayoutWatchSettings {
  /** First read after a subscriber arrives, and again after every change. Default 500 ms. */
  initialDelayMs: number;
  /** Reads back off by `factor` while nothing changes, up to this. Default 10 s. */
  maxDelayMs: number;
  factor: number;
  /** The watcher lease's lifetime; renewed on every read, so it must exceed maxDelayMs. Default 30 s. */
  leaseTtlMs: number;
}

export const DEFAULT_PAYOUT_WATCH: PayoutWatchSettings = { initialDelayMs: 500, maxDelayMs: 10_000, factor: 2, leaseTtlMs: 30_000 };

/**
 * The provider sends no payout notifications, so payoutUpdated is fed by reading GET /v1/withdrawals/{id} while
 * anyone watches. One watch per payout per process, however many subscribers (reference-counted); across
 * instances, the one holding the payout's lease reads and publishes, the others only listen and try to take the
 * lease over every leaseTtlMs/3 (so a watcher whose instance died is replaced within about 1.3 lease lifetimes).
 * Reads back off from initialDelayMs to maxDelayMs while nothing changes, start over after a change, and stop at
 * a final status.
 */
export class PayoutWatchers {
  private readonly watches = new Map<string, PayoutWatch>();
  private closed = false;

  constructor(
    private readonly payouts: PayoutClient,
    private readonly bus: EventBus,
    private readonly leases: Leases,
    private readonly logger: Logger,
    private readonly settings: PayoutWatchSettings = DEFAULT_PAYOUT_WATCH,
    private readonly telemetry?: Telemetry,
  ) {
    if (settings.leaseTtlMs <= settings.maxDelayMs) throw new Error('payout watch leaseTtlMs must exceed maxDelayMs');
  }

  /** Registers one subscriber's interest; call the returned function when it leaves. */
  watch(transactionId: string): () => void {
    if (this.closed) return () => undefined;
    let watch = this.watches.get(transactionId);
    if (!watch) {
      watch = new PayoutWatch(transactionId, this.payouts, this.bus, this.leases, this.logger, this.settings, this.telemetry);
      this.watches.set(transactionId, watch);
      watch.start();
    }
    watch.refs += 1;
    let released = false;
    const current = watch;
    return () => {
      if (released) return;
      released = true;
      current.refs -= 1;
      if (current.refs === 0) {
        if (this.watches.get(transactionId) === current) this.watches.delete(transactionId);
        void current.stop();
      }
    };
  }

  /** True while this instance reads the payout for its watchers (holds the lease). */
  isPolling(transactionId: string): boolean {
    return this.watches.get(transactionId)?.polling ?? false;
  }

  /** Payouts with at least one subscriber on this instance. */
  get watched(): string[] {
    return [...this.watches.keys()];
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.watches.values()].map((watch) => watch.stop()));
    this.watches.clear();
  }
}

class PayoutWatch {
  refs = 0;
  private timer: NodeJS.Timeout | undefined;
  private delayMs: number;
  private leader = false;
  private stopped = false;
  private finished = false;
  private lastSeen: string | undefined;
  private readonly leaseName: string;

  constructor(
    private readonly transactionId: string,
    private readonly payouts: PayoutClient,
    private readonly bus: EventBus,
    private readonly leases: Leases,
    private readonly logger: Logger,
    private readonly settings: PayoutWatchSettings,
    private readonly telemetry: Telemetry | undefined,
  ) {
    this.delayMs = settings.initialDelayMs;
    this.leaseName = `payout:${transactionId}`;
  }

  get polling(): boolean {
    return this.leader && !this.stopped && !this.finished;
  }

  start(): void {
    this.schedule(this.settings.initialDelayMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.resign();
  }

  private schedule(ms: number): void {
    if (this.stopped || this.finished) return;
    // Each read is a job run of its own trace: it serves no one request, and its provider call and publish hang off it.
    this.timer = setTimeout(() => void traceJob(this.telemetry, 'payout-watch', () => this.tick()), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    try {
      this.leader = await this.leases.hold(this.leaseName, this.settings.leaseTtlMs);
    } catch (error) {
      this.logger.warn({ err: error, transactionId: this.transactionId }, 'payout watcher could not take its lease');
      this.leader = false;
    }
    if (this.stopped) return this.resign();
    if (!this.leader) return this.schedule(Math.max(this.settings.initialDelayMs, Math.floor(this.settings.leaseTtlMs / 3)));

    let withdrawal: ProviderWithdrawal | undefined;
    try {
      withdrawal = await this.payouts.getWithdrawal(this.transactionId);
    } catch (error) {
      this.logger.warn({ err: error, transactionId: this.transactionId }, 'payout watcher could not read the withdrawal');
    }
    if (this.stopped) return this.resign();
    if (withdrawal) {
      const seen = JSON.stringify(withdrawal);
      if (seen !== this.lastSeen) {
        this.lastSeen = seen;
        this.delayMs = this.settings.initialDelayMs;
        await this.bus
          .publish(topics.payout(this.transactionId), withdrawal)
          .catch((error: unknown) => this.logger.warn({ err: error, transactionId: this.transactionId }, 'payout change could not be published'));
      } else {
        this.delayMs = Math.min(this.settings.maxDelayMs, this.delayMs * this.settings.factor);
      }
      if (FINAL_PAYOUT_STATUSES.has(withdrawal.status)) {
        this.finished = true;
        return this.resign();
      }
    } else {
      this.delayMs = Math.min(this.settings.maxDelayMs, this.delayMs * this.settings.factor);
    }
    this.schedule(this.delayMs);
  }

  private async resign(): Promise<void> {
    if (!this.leader) return;
    this.leader = false;
    await this.leases
      .release(this.leaseName)
      .catch((error: unknown) => this.logger.warn({ err: error, transactionId: this.transactionId }, 'payout watcher could not release its lease'));
  }
}
