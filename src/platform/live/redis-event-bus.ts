import type { Logger } from '../observability/logger';
import { LRUCache } from 'lru-cache';
import { deepFreeze, deliver, type EventBus, type EventHandler } from './event-bus';
import type { RedisConnection } from '../store/redis-connection';

/**
 * PUBSUB_URL=redis://: every instance publishes to and subscribes on Redis channels `<prefix>live:<topic>`, so an
 * event published by the instance that received a webhook reaches subscribers on all of them. Two connections:
 * one for PUBLISH (shared with other commands), one that only SUBSCRIBEs. An instance SUBSCRIBEs to a channel only
 * while one of its own clients listens to that topic (node-redis counts the listeners per channel), and node-redis
 * re-subscribes by itself after a reconnect. Redis pub/sub is fire-and-forget: an event published while an
 * instance is disconnected does not reach it, which is why every subscription starts from the current state.
 */
export class RedisEventBus implements EventBus {
  /** The last message seen on each channel, parsed (see `parsed`). */
  private readonly lastMessages = new LRUCache<string, { message: string; payload: unknown }>({ max: 1_000 });

  constructor(
    private readonly publisher: RedisConnection,
    private readonly subscriber: RedisConnection,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {}

  async publish(topic: string, payload: unknown): Promise<void> {
    await this.publisher.run('PUBLISH', (client) => client.publish(this.channel(topic), JSON.stringify(payload)));
  }

  async listen(topic: string, handler: EventHandler): Promise<() => Promise<void>> {
    const channel = this.channel(topic);
    // A listener of its own per call: node-redis sends UNSUBSCRIBE only when a channel's last listener goes.
    const listener = (message: string): void => {
      let payload: unknown;
      try {
        payload = this.parsed(channel, message);
      } catch (error) {
        this.logger.error({ err: error, channel }, 'a live event on redis is not JSON; dropped');
        return;
      }
      deliver(handler, payload, topic, this.logger);
    };
    await this.subscriber.run('SUBSCRIBE', (client) => client.subscribe(channel, listener));
    let removed = false;
    return async () => {
      if (removed) return;
      removed = true;
      await this.subscriber
        .run('UNSUBSCRIBE', (client) => client.unsubscribe(channel, listener))
        .catch((error: unknown) => this.logger.warn({ err: error, channel }, 'could not unsubscribe from a live-event channel'));
    };
  }

  async checkReady(): Promise<void> {
    await this.publisher.run('PING', (client) => client.ping());
    await this.subscriber.get();
  }

  async close(): Promise<void> {
    // The connections are closed by their owner (src/app/live.ts), which may share the publisher with other users.
  }

  /**
   * node-redis calls every listener of a channel with the same message: it is parsed once, frozen, and the one
   * object shared, as on the in-memory bus (so sharedSubscribe can execute it once for all identical subscribers).
   */
  private parsed(channel: string, message: string): unknown {
    const last = this.lastMessages.get(channel);
    if (last?.message === message) return last.payload;
    const payload = deepFreeze(JSON.parse(message) as unknown);
    this.lastMessages.set(channel, { message, payload });
    return payload;
  }

  private channel(topic: string): string {
    return `${this.prefix}live:${topic}`;
  }
}
