import type { PubSub } from 'type-graphql';
import type { Logger } from '../observability/logger';
import { AsyncQueue } from './async-queue';

export type EventHandler = (payload: unknown) => void;

/**
 * Fan-out of live events (topics.ts) to every listener on every gateway instance that shares the bus.
 * Payloads are JSON values: they are serialised on publish (in memory too, so both buses behave alike).
 */
export interface EventBus {
  publish(topic: string, payload: unknown): Promise<void>;
  /**
   * Adds a listener. Resolves once the listener is in place, i.e. it receives every event published after that
   * moment, on any instance; the function it resolves with removes it.
   */
  listen(topic: string, handler: EventHandler): Promise<() => Promise<void>>;
  /** Rejects when the bus cannot carry events (for /readyz). */
  checkReady(): Promise<void>;
  close(): Promise<void>;
}

/** One process: PUBSUB_URL=memory. Events reach only this instance's subscribers. */
export class MemoryEventBus implements EventBus {
  private readonly handlers = new Map<string, Set<EventHandler>>();

  constructor(private readonly logger: Logger) {}

  async publish(topic: string, payload: unknown): Promise<void> {
    // A JSON round trip, as over Redis, so both buses hand listeners the same kind of value; parsed once and frozen,
    // because thousands of subscribers share it and none may change what the others see.
    const shared = deepFreeze(JSON.parse(JSON.stringify(payload)) as unknown);
    // Delivered on a later tick, as a Redis message would be: a publisher never runs its listeners inline.
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (const handler of [...(this.handlers.get(topic) ?? [])]) deliver(handler, shared, topic, this.logger);
  }

  async listen(topic: string, handler: EventHandler): Promise<() => Promise<void>> {
    let set = this.handlers.get(topic);
    if (!set) this.handlers.set(topic, (set = new Set()));
    const registered: EventHandler = (payload) => handler(payload);
    set.add(registered);
    return async () => {
      set.delete(registered);
      if (set.size === 0 && this.handlers.get(topic) === set) this.handlers.delete(topic);
    };
  }

  async checkReady(): Promise<void> {}

  async close(): Promise<void> {
    this.handlers.clear();
  }

  /** Topics with at least one listener (tests check that unsubscribing cleans up). */
  get listenedTopics(): string[] {
    return [...this.handlers.keys()];
  }
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

export function deliver(handler: EventHandler, payload: unknown, topic: string, logger: Logger): void {
  try {
    handler(payload);
  } catch (error) {
    logger.error({ err: error, topic }, 'a live-event listener failed');
  }
}

/**
 * type-graphql asks for a PubSub once any @Subscription exists. This gateway's subscriptions subscribe through
 * their own `subscribe` functions (current state first, authorisation, watchers), so this adapter is the plain
 * topic stream over the same bus, for any resolver that wants `topics:`-style subscriptions.
 */
export function typeGraphqlPubSub(bus: EventBus): PubSub {
  return {
    publish(routingKey: string, ...args: unknown[]): void {
      const [idOrPayload, payload] = args;
      const topic = args.length > 1 ? `${routingKey}:${String(idOrPayload)}` : routingKey;
      void bus.publish(topic, args.length > 1 ? payload : idOrPayload);
    },
    subscribe(routingKey: string, dynamicId?: unknown): AsyncIterable<unknown> {
      const topic = dynamicId === undefined ? routingKey : `${routingKey}:${String(dynamicId)}`;
      let unlisten: Promise<() => Promise<void>> | undefined;
      const queue = new AsyncQueue<unknown>(256, async () => (await unlisten)?.());
      unlisten = bus.listen(topic, (payload) => queue.push(payload));
      return queue;
    },
  };
}
