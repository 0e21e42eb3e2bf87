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
  logger: Logger;
}

/**
 * A subscription's event stream: the current state first, then every change, each state once and never
 * backwards. Built before the subscription is acknowledged, so an authorisation or not-found error is the
 * subscription's GraphQL error rather than a broken stream.
 */
export async function liveStream<T>(options: LiveStreamOptions<T>): Promise<AsyncIterableIterator<T>> {
  const { logger } = options;
  let closed = false;
  let unlisten: (() => Promise<void>) | undefined;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await unlisten?.();
    await options.onClose?.();
  };
  const events = new AsyncQueue<unknown>(256, close);
  let sink: ValueSink | undefined;
  let finished = false;
  /** Events that arrived while a direct delivery waited for its shared result; they follow it, in order. */
  let held: unknown[] | undefined;
  const onEvent = (payload: unknown): void => {
    if (held !== undefined) {
      held.push(payload);
      return;
    }
    // Only while the consumer waits with nothing queued: everything before this event has then been sent, so a
    // value delivered here cannot overtake one still on its way through the iterator.
    if (sink !== undefined && !finished && events.isWaiting && offer(sink, payload)) return;
    events.push(payload);
  };
  try {
    unlisten = await options.bus.listen(options.topic, onEvent);
  } catch (error) {
    await close();
    throw error;
  }
  let initial: T[];
  try {
    initial = [...(await options.current())];
  } catch (error) {
    await events.return();
    throw error;
  }

  const sent = new Map<string, { rank: number; json: string }>();
  const isNew = (key: string, value: T): boolean => {
    const last = sent.get(key);
    return !last || (options.rank(value) >= last.rank && last.json !== jsonOf(value));
  };
  const record = (key: string, value: T): void => {
    const last = sent.get(key);
    if (last) {
      last.rank = options.rank(value);
      last.json = jsonOf(value);
    } else sent.set(key, { rank: options.rank(value), json: jsonOf(value) });
  };
  const admit = (value: T): boolean => {
    const key = options.identity(value);
    if (!isNew(key, value)) return false;
    record(key, value);
    return true;
  };
  /**
   * The event handed straight to the sink when it can be: true when it was delivered, is on its way, or is nothing
   * for this subscriber (exactly as the iterator would have skipped it); false sends it the ordinary way, through
   * the queue and the iterator, which also logs a failing fromEvent and ends the stream after a final value.
   */
  const offer = (to: ValueSink, payload: unknown): boolean => {
    let value: T | undefined | Promise<T | undefined>;
    try {
      value = options.fromEvent(payload);
    } catch {
      return false;
    }
    if (value === undefined) return true;
    if (value instanceof Promise || options.isFinal?.(value)) return false;
    const key = options.identity(value);
    if (!isNew(key, value)) return true;
    const delivered = to(value, (later) => settle(payload, key, value, later));
    if (delivered === undefined) held = [];
    else if (delivered) record(key, value);
    return delivered !== false;
  };
  /** A direct delivery that waited has ended: what arrived meanwhile goes on, after the event if it was declined. */
  const settle = (payload: unknown, key: string, value: T, delivered: boolean): void => {
    const after = held ?? [];
    held = undefined;
    if (finished) return;
    if (delivered) record(key, value);
    else events.push(payload);
    for (const next of after) onEvent(next);
  };
  const emit = async (value: T): Promise<IteratorResult<T>> => {
    if (options.isFinal?.(value)) {
      finished = true;
      initial = [];
      await events.return();
    }
    return { value, done: false };
  };

  const iterator: AsyncIterableIterator<T> = {
    async next(): Promise<IteratorResult<T>> {
      while (initial.length > 0) {
        const value = initial.shift()!;
        if (admit(value)) return emit(value);
      }
      while (!finished) {
        const result = await events.next();
        if (result.done) break;
        let value: T | undefined;
        try {
          value = await options.fromEvent(result.value);
        } catch (error) {
          logger.warn({ err: error, topic: options.topic }, 'a live event could not be shown to a subscriber; skipped');
          continue;
        }
        if (value !== undefined && admit(value)) return emit(value);
      }
      await events.return();
      return { value: undefined, done: true };
    },
    async return(): Promise<IteratorResult<T>> {
      finished = true;
      initial = [];
      await events.return();
      return { value: undefined, done: true };
    },
    async throw(error?: unknown): Promise<IteratorResult<T>> {
      await iterator.return!();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  sinkSetters.set(iterator, (to) => {
    sink = to;
  });
  return iterator;
}

/**
 * Takes one of the stream's values (an event's shared mapped object) and delivers it: true when it did, false when
 * it could not (the value then goes through the iterator as usual), undefined when it will, once something shared
 * is ready (e.g. the event's execution), and then calls `done` with true or false. A stream holds its later events
 * until then, so they keep their order.
 */
export type ValueSink = (value: unknown, done: (delivered: boolean) => void) => boolean | undefined;

const sinkSetters = new WeakMap<object, (sink: ValueSink) => void>();

/**
 * Lets a live stream hand its events' values to `sink` synchronously, from the bus's own delivery loop, instead
 * of each subscriber's event travelling through its queue and two async iterators (a handful of promises per
 * subscriber and event, which with thousands of subscribers is most of the fan-out's time). The current state
 * and anything the sink declines still go through the iterator. False when `stream` is not a live stream.
 */
export function attachValueSink(stream: object, sink: ValueSink): boolean {
  const setSink = sinkSetters.get(stream);
  setSink?.(sink);
  return setSink !== undefined;
}

/** An event's mapped value is one object shared by all its subscribers: serialise it once for all of them. */
const serialised = new WeakMap<object, string>();

function jsonOf(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  let json = serialised.get(value);
  if (json === undefined) serialised.set(value, (json = JSON.stringify(value)));
  return json;
}
