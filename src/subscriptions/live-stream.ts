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
  /** Called only when something is logged, so an idle subscription need not carry a logger of its own. */
  logger(): Logger;
}

/**
 * A subscription's event stream: the current state first, then every change, each state once and never
 * backwards. Built before the subscription is acknowledged, so an authorisation or not-found error is the
 * subscription's GraphQL error rather than a broken stream.
 */
export async function liveStream<T>(options: LiveStreamOptions<T>): Promise<AsyncIterableIterator<T>> {
  let closed = false;
  let unlisten: (() => Promise<void>) | undefined;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await unlisten?.();
    await options.onClose?.();
  };
  const events = new AsyncQueue<unknown>(256, close);
  try {
    unlisten = await options.bus.listen(options.topic, (payload) => events.push(payload));
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
  const admit = (value: T): boolean => {
    const key = options.identity(value);
    const json = jsonOf(value);
    const last = sent.get(key);
    if (last && (options.rank(value) < last.rank || last.json === json)) return false;
    sent.set(key, { rank: options.rank(value), json });
    return true;
  };
  let finished = false;
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
          options.logger().warn({ err: error, topic: options.topic }, 'a live event could not be shown to a subscriber; skipped');
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
  return iterator;
}

/** An event's mapped value is one object shared by all its subscribers: serialise it once for all of them. */
const serialised = new WeakMap<object, string>();

function jsonOf(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  let json = serialised.get(value);
  if (json === undefined) serialised.set(value, (json = JSON.stringify(value)));
  return json;
}
