import type { Logger } from '../observability/logger';
import { traceJob, type Telemetry } from '../observability/telemetry';
import type { Leases } from './lease';
import { StatusWatchers, type StatusWatchDeps, type StatusWatchSettings, type WatchedStatus } from './status-watcher';

/** What a pass is given: its logger, whether the scheduler is closing (stop early), and where repairs are counted. */
export interface PassRun {
  readonly logger: Logger;
  stopping(): boolean;
  /** Counts one repair (bankgraph_reconciler_repairs_total{kind}); the pass logs what it repaired. */
  repaired(kind: string): void;
}

/** A feature's background pass, run in order with the others on every tick of the instance holding the lease. */
export interface PassJob {
  /** For the logs when the pass fails. */
  readonly name: string;
  run(run: PassRun): Promise<void>;
}

export interface SchedulerDeps {
  /** The passes' lease: shared by every instance (the database's), so one instance at a time runs them. */
  passLeases: Leases;
  /** What watches share: the bus, their leases (Redis, or per process with in-process events), logs, traces. */
  watches: StatusWatchDeps;
  logger: Logger;
  telemetry?: Telemetry;
  /** Each pass's outcome (bankgraph_reconciler_runs_total) and each repair's kind. */
  onPass?(outcome: 'ok' | 'error'): void;
  onRepair?(kind: string): void;
}

export interface SchedulerSettings {
  /** How often the passes run (RECONCILE_INTERVAL_MS). */
  intervalMs: number;
}

/** The passes' lease name and trace name, and the name their logs and metrics have always had. */
const PASS_LEASE = 'reconciler';

/**
 * The gateway's one scheduler of background work, with one lease abstraction (lease.ts) for both kinds of job:
 * - periodic passes (`addPass`): every `intervalMs` each instance tries the shared lease, and the one holding it runs
 *   every pass in the order they were added (the lease outlives a tick, so the holder keeps it). The passes repair
 *   what requests and webhooks left unfinished; `runOnce` runs them now (tests, and the interval);
 * - on-demand watches (`watches`): per-id polling of the provider while someone subscribes (StatusWatchers), one
 *   reader per id across the instances sharing the watch leases.
 * A feature declares both the same way, as data its `<x>.job.ts` files make (PassJob, WatchedStatus); the
 * composition root hands them to the scheduler.
 */
export class Scheduler {
  private readonly passes: PassJob[] = [];
  private readonly watchers: { close(): Promise<void> }[] = [];
  private readonly logger: Logger;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly deps: SchedulerDeps,
    private readonly settings: SchedulerSettings,
  ) {
    this.logger = deps.logger.child({ job: PASS_LEASE });
  }

  addPass(job: PassJob): void {
    this.passes.push(job);
  }

  /** Per-id watches of one kind of thing (a feature's WatchedStatus); closed with the scheduler. */
  watches<T>(subject: WatchedStatus<T>, settings: StatusWatchSettings): StatusWatchers<T> {
    const watchers = new StatusWatchers<T>(subject, this.deps.watches, settings);
    this.watchers.push(watchers);
    return watchers;
  }

  start(): void {
    if (this.closed || this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.settings.intervalMs);
    this.timer.unref();
  }

  /** Every pass once if this instance holds (or takes) the lease; false when another instance holds it. */
  async runOnce(): Promise<boolean> {
    if (!(await this.deps.passLeases.hold(PASS_LEASE, this.settings.intervalMs * 3))) return false;
    const run: PassRun = {
      logger: this.logger,
      stopping: () => this.closed,
      repaired: (kind) => this.deps.onRepair?.(kind),
    };
    try {
      await traceJob(this.deps.telemetry, 'reconcile', async () => {
        for (const pass of this.passes) {
          if (this.closed) return;
          await pass.run(run);
        }
      });
      this.deps.onPass?.('ok');
    } catch (error) {
      this.deps.onPass?.('error');
      throw error;
    }
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled(this.watchers.map((watchers) => watchers.close()));
    await this.running;
    await this.deps.passLeases.release(PASS_LEASE).catch(() => undefined);
  }

  private async tick(): Promise<void> {
    if (this.running || this.closed) return;
    this.running = this.runOnce()
      .then(() => undefined)
      .catch((error: unknown) => this.logger.warn({ err: error }, 'reconciler pass failed; the next one retries'))
      .finally(() => {
        this.running = undefined;
      });
    await this.running;
  }
}
