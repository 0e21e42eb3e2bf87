import type { Logger } from '../observability/logger';
import { traceJob, type Telemetry } from '../observability/telemetry';
import type { Leases } from './lease';

export interface StatusWatchSettings {
  /** First read after a subscriber arrives, and again after every change. */
  initialDelayMs: number;
  /** Reads back off by `factor` while nothing changes, up to this. */
  maxDelayMs: number;
  factor: number;
  /** The watcher lease's lifetime; renewed on every read, so it must exceed maxDelayMs. */
  leaseTtlMs: number;
}

/** What a kind of watched thing is: how it is read, what of a read is news, and when it can no longer change. */
export interface WatchedStatus<T> {
  /** Names the lease (`<kind>:<id>`), the job's trace (`<kind>-watch`) and the logs. */
  readonly kind: string;
  /** The log field the id goes in (`transactionId`, `paymentId`). */
  readonly idField: string;
  /** Where the thing's changes are published (topics.ts). */
  topic(id: string): string;
  read(id: string): Promise<T>;
  /** The events that tell what `current` shows and `previous` (undefined before the first read) did not. */
  changes(id: string, current: T, previous: T | undefined): unknown[];
  isFinal(value: T): boolean;
  /**
   * Where others publish too (a refund's creation and its webhooks): folds an event heard on the thing's topic into
   * what the watch last read, so that a change someone else announced is not published a second time.
   */
  heard?(last: T | undefined, payload: unknown): T | undefined;
  /**
   * For a thing that can move again after a final read (a payment gains a new refund): which events on its topic
   * start a finished watch over (and bring a running one back to initialDelayMs).
   */
  wakes?(payload: unknown): boolean;
}

/** Where watched things' changes are published and heard (the live event bus, which the scheduler does not know). */
export interface WatchBus {
  publish(topic: string, payload: unknown): Promise<void>;
  listen(topic: string, handler: (payload: unknown) => void): Promise<() => Promise<void>>;
}

/** What every watcher shares: where changes go, who reads (leases), the log, and traces of each read. */
export interface StatusWatchDeps {
  bus: WatchBus;
  leases: Leases;
  logger: Logger;
  telemetry?: Telemetry;
}

/**
 * Polls the provider for things it sends no notification of, while anyone watches them. One watch per thing per
 * process, however many subscribers (reference-counted); across instances, the one holding the thing's lease reads
 * and publishes, the others only listen and try to take the lease over every leaseTtlMs/3 (so a watcher whose
 * instance died is replaced within about 1.3 lease lifetimes). Reads back off from initialDelayMs to maxDelayMs
 * while nothing changes, start over after a change, and stop at a final state.
 */
export class StatusWatchers<T> {
  private readonly watches = new Map<string, StatusWatch<T>>();
  private closed = false;

  constructor(
    private readonly subject: WatchedStatus<T>,
    private readonly deps: StatusWatchDeps,
    private readonly settings: StatusWatchSettings,
  ) {
    if (settings.leaseTtlMs <= settings.maxDelayMs) throw new Error(`${subject.kind} watch leaseTtlMs must exceed maxDelayMs`);
  }

  /** Registers one subscriber's interest; call the returned function when it leaves. */
  watch(id: string): () => void {
    if (this.closed) return () => undefined;
    let watch = this.watches.get(id);
    if (!watch) {
      watch = new StatusWatch(id, this.subject, this.deps, this.settings);
      this.watches.set(id, watch);
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
        if (this.watches.get(id) === current) this.watches.delete(id);
        void current.stop();
      }
    };
  }

  /** True while this instance reads the thing for its watchers (holds the lease). */
  isPolling(id: string): boolean {
    return this.watches.get(id)?.polling ?? false;
  }

  /** Things with at least one subscriber on this instance. */
  get watched(): string[] {
    return [...this.watches.keys()];
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.watches.values()].map((watch) => watch.stop()));
    this.watches.clear();
  }
}

class StatusWatch<T> {
  refs = 0;
  private timer: NodeJS.Timeout | undefined;
  private delayMs: number;
  private leader = false;
  private stopped = false;
  private finished = false;
  private reading = false;
  private wokenWhileReading = false;
  private lastSeen: T | undefined;
  private unlisten: Promise<() => Promise<void>> | undefined;
  private readonly leaseName: string;
  private readonly logFields: Record<string, string>;

  constructor(
    private readonly id: string,
    private readonly watched: WatchedStatus<T>,
    private readonly deps: StatusWatchDeps,
    private readonly settings: StatusWatchSettings,
  ) {
    this.delayMs = settings.initialDelayMs;
    this.leaseName = `${watched.kind}:${id}`;
    this.logFields = { [watched.idField]: id };
  }

  get polling(): boolean {
    return this.leader && !this.stopped && !this.finished;
  }

  start(): void {
    const { heard, wakes } = this.watched;
    if (heard || wakes) {
      this.unlisten = this.deps.bus.listen(this.watched.topic(this.id), (payload) => {
        if (heard) this.lastSeen = heard.call(this.watched, this.lastSeen, payload);
        if (wakes?.call(this.watched, payload)) this.wake();
      });
      this.unlisten.catch((error: unknown) =>
        this.deps.logger.warn({ err: error, ...this.logFields }, `${this.watched.kind} watcher could not listen for changes`),
      );
    }
    this.schedule(this.settings.initialDelayMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.allSettled([this.unlisten?.then((unlisten) => unlisten()), this.resign()]);
  }

  /** Something moved: read soon, and on from initialDelayMs, even after a final read. */
  private wake(): void {
    if (this.stopped) return;
    // A read under way may have been answered before the move (all final, without a refund just made): it must
    // not be the last, so the wake takes effect once it is done.
    if (this.reading) {
      this.wokenWhileReading = true;
      return;
    }
    this.finished = false;
    this.delayMs = this.settings.initialDelayMs;
    this.schedule(this.delayMs);
  }

  private schedule(ms: number): void {
    if (this.stopped || this.finished) return;
    if (this.timer) clearTimeout(this.timer);
    // Each read is a job run of its own trace: it serves no one request, and its provider call and publish hang off it.
    this.timer = setTimeout(() => void traceJob(this.deps.telemetry, `${this.watched.kind}-watch`, () => this.tick()), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    this.reading = true;
    this.wokenWhileReading = false;
    try {
      await this.read();
    } finally {
      this.reading = false;
    }
    if (this.wokenWhileReading) this.wake();
  }

  private async read(): Promise<void> {
    const kind = this.watched.kind;
    try {
      this.leader = await this.deps.leases.hold(this.leaseName, this.settings.leaseTtlMs);
    } catch (error) {
      this.deps.logger.warn({ err: error, ...this.logFields }, `${kind} watcher could not take its lease`);
      this.leader = false;
    }
    if (this.stopped) return this.resign();
    if (!this.leader) return this.schedule(Math.max(this.settings.initialDelayMs, Math.floor(this.settings.leaseTtlMs / 3)));

    let current: T | undefined;
    try {
      current = await this.watched.read(this.id);
    } catch (error) {
      this.deps.logger.warn({ err: error, ...this.logFields }, `${kind} watcher could not read the provider`);
    }
    if (this.stopped) return this.resign();
    if (current !== undefined) {
      const events = this.watched.changes(this.id, current, this.lastSeen);
      this.lastSeen = current;
      this.delayMs = events.length > 0 ? this.settings.initialDelayMs : Math.min(this.settings.maxDelayMs, this.delayMs * this.settings.factor);
      for (const event of events) {
        await this.deps.bus
          .publish(this.watched.topic(this.id), event)
          .catch((error: unknown) => this.deps.logger.warn({ err: error, ...this.logFields }, `${kind} change could not be published`));
      }
      if (this.watched.isFinal(current)) {
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
    await this.deps.leases
      .release(this.leaseName)
      .catch((error: unknown) => this.deps.logger.warn({ err: error, ...this.logFields }, `${this.watched.kind} watcher could not release its lease`));
  }
}
