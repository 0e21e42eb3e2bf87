/**
 * A push-to-pull bridge: producers `push`, one consumer iterates. Unlike an async generator, `return()` takes
 * effect at once even while the consumer waits in `next()` (an async generator would queue the return behind the
 * pending await, so an unsubscribed client with no new events would leak its listener forever).
 *
 * Bounded: when the consumer falls `capacity` items behind, the oldest are dropped. Every item this gateway
 * queues is a whole state snapshot, so a slow client skips intermediate states but never misses the latest.
 */
export class AsyncQueue<T> implements AsyncIterableIterator<T> {
  private readonly items: T[] = [];
  /** Consumers waiting in next(): almost always one, so the first has a field of its own (an idle subscriber waits). */
  private waiter: ((result: IteratorResult<T>) => void) | undefined;
  private readonly moreWaiters: ((result: IteratorResult<T>) => void)[] = [];
  private done = false;
  private dropped = 0;

  constructor(
    private readonly capacity = 256,
    private readonly onReturn?: () => void | Promise<void>,
  ) {}

  push(item: T): void {
    if (this.done) return;
    const waiter = this.takeWaiter();
    if (waiter) {
      waiter({ value: item, done: false });
      return;
    }
    this.items.push(item);
    if (this.items.length > this.capacity) {
      this.items.shift();
      this.dropped += 1;
    }
  }

  /** Items dropped because the consumer was too slow. */
  get droppedCount(): number {
    return this.dropped;
  }

  get isDone(): boolean {
    return this.done;
  }

  /** The consumer is waiting in `next()` and nothing is queued: it has handled every item pushed so far. */
  get isWaiting(): boolean {
    return this.waiter !== undefined;
  }

  next(): Promise<IteratorResult<T>> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve({ value: item, done: false });
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      if (this.waiter) this.moreWaiters.push(resolve);
      else this.waiter = resolve;
    });
  }

  private takeWaiter(): ((result: IteratorResult<T>) => void) | undefined {
    const waiter = this.waiter;
    this.waiter = this.moreWaiters.shift();
    return waiter;
  }

  /** Ends the queue: pending and later `next()` calls resolve done; queued items are discarded. */
  async return(): Promise<IteratorResult<T>> {
    if (!this.done) {
      this.done = true;
      this.items.length = 0;
      for (let waiter = this.takeWaiter(); waiter; waiter = this.takeWaiter()) waiter({ value: undefined, done: true });
      await this.onReturn?.();
    }
    return { value: undefined, done: true };
  }

  async throw(error?: unknown): Promise<IteratorResult<T>> {
    await this.return();
    throw error;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
