import type { Logger } from '../logger';
import { AsyncQueue } from './async-queue';
import type { EventBus } from './event-bus';

export interface LiveStreamOptions<T> {
  bus: EventBus;
  topic: string;
  /** The current state, read once the listener is in place (so nothing published meanwhile is missed). */
  current(): Promise<readonly T[]>;
  /** What an event shows the subscriber; undefined skips it (e.g. another refund of the payment). */
  fromEvent(payload: unknown): T | undefined | Promise<T | undefined>;
  /** Which thing a value is a state of (a refund id for a payment's refunds; one constant for a single thing). */
  identity(value: T): string;
  /**
   * How far along a state is. A value ranked below the last one sent for the same thing is stale (an event that
   * was in flight while the current state was read) and is skipped; a value equal to the last one sent is skipped too.
   */
  rank(value: T): number;
  /** A value after which nothing can change: the stream ends after sending it. */
  isFinal?(value: T): boolean;
  /** Runs once when the stream ends for any reason (client unsubscribed, final state, error). */
  onClose?(): void | Promise<void>;
  /**
   * Whose logger a skipped event is logged with (the operation's context), read only then: the context makes its
   * logger on first use, and an idle subscription should not carry one.
   */
  logs: { readonly logger: Logger };
}

/**
 * A subscription's event stream: the current state first, then every change, each state once and never
 * backwards. Built before the subscription is acknowledged, so an authorisation or not-found error is the
 * subscription's GraphQL error rather than a broken stream.
 */
export async function liveStream<T>(options: LiveStreamOptions<T>): Promise<AsyncIterableIterator<T>> {
  const stream = new LiveStream(options);
  try {
    stream.unlisten = await options.bus.listen(options.topic, (payload) => stream.events.push(payload));
  } catch (error) {
    await stream.close();
    throw error;
  }
  try {
    stream.initial = [...(await options.current())];
  } catch (error) {
    await stream.events.return();
    throw error;
  }
  return stream;
}

/**
 * liveStream's iterator. A class, so that an idle subscriber holds a few fields and shares its methods with every
 * other one (an object of closures cost each subscriber its own functions and their names).
 */
class LiveStream<T> implements AsyncIterableIterator<T> {
  readonly events: AsyncQueue<unknown>;
  unlisten: (() => Promise<void>) | undefined;
  initial: T[] = [];
  /** The last state sent of each thing; made with the first. */
  private sent: Map<string, { rank: number; json: string }> | undefined;
  private finished = false;
  private closed = false;

  constructor(private readonly options: LiveStreamOptions<T>) {
    this.events = new AsyncQueue<unknown>(256, () => this.close());
  }

  /** Runs once: stops listening and runs onClose. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.unlisten?.();
    await this.options.onClose?.();
  }

  async next(): Promise<IteratorResult<T>> {
    while (this.initial.length > 0) {
      const value = this.initial.shift()!;
      if (this.admit(value)) return this.emit(value);
    }
    while (!this.finished) {
      const result = await this.events.next();
      if (result.done) break;
      let value: T | undefined;
      try {
        value = await this.options.fromEvent(result.value);
      } catch (error) {
        this.options.logs.logger.warn({ err: error, topic: this.options.topic }, 'a live event could not be shown to a subscriber; skipped');
        continue;
      }
      if (value !== undefined && this.admit(value)) return this.emit(value);
    }
    await this.events.return();
    return { value: undefined, done: true };
  }

  async return(): Promise<IteratorResult<T>> {
    this.finished = true;
    this.initial = [];
    await this.events.return();
    return { value: undefined, done: true };
  }

  async throw(error?: unknown): Promise<IteratorResult<T>> {
    await this.return();
    throw error;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  private admit(value: T): boolean {
    const key = this.options.identity(value);
    const json = jsonOf(value);
    const last = this.sent?.get(key);
    if (last && (this.options.rank(value) < last.rank || last.json === json)) return false;
    (this.sent ??= new Map()).set(key, { rank: this.options.rank(value), json });
    return true;
  }

  private async emit(value: T): Promise<IteratorResult<T>> {
    if (this.options.isFinal?.(value)) {
      this.finished = true;
      this.initial = [];
      await this.events.return();
    }
    return { value, done: false };
  }
}

/** An event's mapped value is one object shared by all its subscribers: serialise it once for all of them. */
const serialised = new WeakMap<object, string>();

function jsonOf(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  let json = serialised.get(value);
  if (json === undefined) serialised.set(value, (json = JSON.stringify(value)));
  return json;
}
