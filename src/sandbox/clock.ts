import { jsonLineLog, type SandboxLog } from './log';

/**
 * Sandbox time: real time multiplied by `timeScale`, plus whatever tests skipped with `advance`.
 * Everything that happens "later" at the provider (withdrawal stages, refund execution, token expiry, async tasks)
 * is scheduled on this clock, so a test can move 24 hours in one call.
 */
export class SandboxClock {
  private readonly realStart = Date.now();
  private readonly sandboxStart: number;
  private skippedMs = 0;
  private readonly tasks: { dueMs: number; seq: number; run: () => void }[] = [];
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly timeScale = 1,
    start: Date = new Date(),
    private readonly log: SandboxLog = jsonLineLog(),
  ) {
    if (!(timeScale > 0)) throw new RangeError(`timeScale must be a positive number, got ${timeScale}`);
    this.sandboxStart = start.getTime();
  }

  nowMs(): number {
    return this.sandboxStart + (Date.now() - this.realStart) * this.timeScale + this.skippedMs;
  }

  now(): Date {
    return new Date(this.nowMs());
  }

  iso(): string {
    return this.now().toISOString();
  }

  /** Runs `run` once sandbox time reaches `dueMs`; tasks due at the same instant run in the order they were scheduled. */
  at(dueMs: number, run: () => void): void {
    this.tasks.push({ dueMs, seq: this.seq++, run });
    this.tasks.sort((a, b) => a.dueMs - b.dueMs || a.seq - b.seq);
    this.arm();
  }

  after(sandboxSeconds: number, run: () => void): void {
    this.at(this.nowMs() + sandboxSeconds * 1000, run);
  }

  advance(seconds: number): Date {
    if (!(seconds >= 0)) throw new RangeError(`seconds must be zero or more, got ${seconds}`);
    this.skippedMs += seconds * 1000;
    this.runDue();
    return this.now();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.tasks.length = 0;
  }

  private runDue(): void {
    // A task may schedule another that is already due (e.g. a refund executing right after its payment settles).
    while (this.tasks.length > 0 && this.tasks[0]!.dueMs <= this.nowMs()) {
      const task = this.tasks.shift()!;
      try {
        task.run();
      } catch (error) {
        // One broken task must not stop the clock (or the process) for everything scheduled after it.
        this.log.error('a scheduled task failed', { err: error });
      }
    }
    this.arm();
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const next = this.tasks[0];
    if (!next) return;
    const realDelay = Math.max(0, (next.dueMs - this.nowMs()) / this.timeScale);
    // Capped so a far-future task does not overflow setTimeout; unref'd so it never keeps a process alive.
    this.timer = setTimeout(() => this.runDue(), Math.min(realDelay, 60_000) + 1);
    this.timer.unref();
  }
}
