import type { Logger } from '../observability/logger';
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
    stream.unlisten = await options.bus.listen(options.topic, (payload) => stream.onEvent(payload));
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
  /** Where events' values go straight from the bus's delivery loop (attachValueSink), when they can. */
  sink: ValueSink | undefined;
  /** The last state sent of each thing; made with the first. */
  private sent: Map<string, { rank: number; json: string }> | undefined;
  /** Events that arrived while a direct delivery waited for its shared result; they follow it, in order. */
  private held: unknown[] | undefined;
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

  onEvent(payload: unknown): void {
    if (this.held !== undefined) {
      this.held.push(payload);
      return;
    }
    // Only while the consumer waits with nothing queued: everything before this event has then been sent, so a
    // value delivered here cannot overtake one still on its way through the iterator.
    if (this.sink !== undefined && !this.finished && this.events.isWaiting && this.offer(this.sink, payload)) return;
    this.events.push(payload);
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

  private isNew(key: string, value: T): boolean {
    const last = this.sent?.get(key);
    return !last || (this.options.rank(value) >= last.rank && last.json !== jsonOf(value));
  }

  private record(key: string, value: T): void {
    const last = this.sent?.get(key);
    if (last) {
      last.rank = this.options.rank(value);
      last.json = jsonOf(value);
    } else (this.sent ??= new Map()).set(key, { rank: this.options.rank(value), json: jsonOf(value) });
  }

  private admit(value: T): boolean {
    const key = this.options.identity(value);
    if (!this.isNew(key, value)) return false;
    this.record(key, value);
    return true;
  }

  /**
   * The event handed straight to the sink when it can be: true when it was delivered, is on its way, or is nothing
   * for this subscriber (exactly as the iterator would have skipped it); false sends it the ordinary way, through
   * the queue and the iterator, which also logs a failing fromEvent and ends the stream after a final value.
   */
  private offer(to: ValueSink, payload: unknown): boolean {
    let value: T | undefined | Promise<T | undefined>;
    try {
      value = this.options.fromEvent(payload);
    } catch {
      return false;
    }
    if (value === undefined) return true;
    if (value instanceof Promise || this.options.isFinal?.(value)) return false;
    const key = this.options.identity(value);
    if (!this.isNew(key, value)) return true;
    const mapped = value;
    const delivered = to(mapped, (later) => this.settle(payload, key, mapped, later));
    if (delivered === undefined) this.held = [];
    else if (delivered) this.record(key, mapped);
    return delivered !== false;
  }

  /** A direct delivery that waited has ended: what arrived meanwhile goes on, after the event if it was declined. */
  private settle(payload: unknown, key: string, value: T, delivered: boolean): void {
    const after = this.held ?? [];
    this.held = undefined;
    if (this.finished) return;
    if (delivered) this.record(key, value);
    else this.events.push(payload);
    for (const next of after) this.onEvent(next);
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

/**
 * Takes one of the stream's values (an event's shared mapped object) and delivers it: true when it did, false when
 * it could not (the value then goes through the iterator as usual), undefined when it will, once something shared
 * is ready (e.g. the event's execution), and then calls `done` with true or false. A stream holds its later events
 * until then, so they keep their order.
 */
export type ValueSink = (value: unknown, done: (delivered: boolean) => void) => boolean | undefined;

/**
 * Lets a live stream hand its events' values to `sink` synchronously, from the bus's own delivery loop, instead
 * of each subscriber's event travelling through its queue and two async iterators (a handful of promises per
 * subscriber and event, which with thousands of subscribers is most of the fan-out's time). The current state
 * and anything the sink declines still go through the iterator. False when `stream` is not a live stream.
 */
export function attachValueSink(stream: object, sink: ValueSink): boolean {
  if (!(stream instanceof LiveStream)) return false;
  stream.sink = sink;
  return true;
}

/** An event's mapped value is one object shared by all its subscribers: serialise it once for all of them. */
const serialised = new WeakMap<object, string>();

function jsonOf(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  let json = serialised.get(value);
  if (json === undefined) serialised.set(value, (json = JSON.stringify(value)));
  return json;
}
