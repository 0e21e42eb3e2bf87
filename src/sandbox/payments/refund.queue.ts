import type { SandboxClock } from '../clock';
import type { RefundRecord } from './refund.types';

/** docs/provider-choices.md: an authorized refund executes 60 s of sandbox time later. */
export const EXECUTE_AFTER_SECONDS = 60;

interface Queued {
  refund: RefundRecord;
  /** When the payment settled, and the order it settled in among payments settled at the same instant. */
  settledAtMs: number;
  settleOrder: number;
  dueMs: number;
}

/**
 * Authorized refunds waiting to execute, in the order the spec requires: by when their payments settled, then by
 * refund creation. A refund executes once it is due and nothing ahead of it is still waiting, so a refund of a
 * payment that settled earlier never executes after one whose payment settled later, even when it was created
 * later (it then holds the others back until it is due, and they execute right after it).
 */
export class RefundExecutionQueue {
  private readonly queue: Queued[] = [];

  constructor(
    private readonly clock: SandboxClock,
    private readonly execute: (refund: RefundRecord, executedAtMs: number) => void,
  ) {}

  /** Queues an authorized refund; it is due EXECUTE_AFTER_SECONDS after `authorizedAtMs`. */
  enqueue(refund: RefundRecord, authorizedAtMs: number, settledAtMs: number, settleOrder: number): void {
    const entry: Queued = { refund, settledAtMs, settleOrder, dueMs: authorizedAtMs + EXECUTE_AFTER_SECONDS * 1000 };
    const at = this.queue.findIndex((queued) => compare(entry, queued) < 0);
    this.queue.splice(at === -1 ? this.queue.length : at, 0, entry);
    this.clock.at(entry.dueMs, () => this.run(entry.dueMs));
  }

  /** Runs at each queued refund's due instant; whatever executes then executes at that instant. */
  private run(nowMs: number): void {
    while (this.queue.length > 0 && this.queue[0]!.dueMs <= nowMs) {
      this.execute(this.queue.shift()!.refund, nowMs);
    }
  }
}

function compare(a: Queued, b: Queued): number {
  return a.settledAtMs - b.settledAtMs || a.settleOrder - b.settleOrder || a.refund.seq - b.refund.seq;
}
