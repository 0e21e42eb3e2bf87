import { randomUUID } from 'node:crypto';
import type { RedisConnection } from '../store/redis-connection';

/**
 * A named lease with an expiry: at most one holder at a time among everyone sharing it. `hold` takes a free
 * (or expired) lease or renews one this holder already has; a holder that stops renewing loses it at expiry.
 */
export interface Leases {
  hold(name: string, ttlMs: number): Promise<boolean>;
  release(name: string): Promise<void>;
}

/** PUBSUB_URL=memory: events stay in this process, so each process watches for its own subscribers. */
export class InProcessLeases implements Leases {
  private readonly held = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  async hold(name: string, ttlMs: number): Promise<boolean> {
    this.held.set(name, this.now() + ttlMs);
    return true;
  }

  async release(name: string): Promise<void> {
    this.held.delete(name);
  }
}

/** Take the lease if free, renew it if ours; 1 when held afterwards. */
const HOLD_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;

const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

/**
 * PUBSUB_URL=redis://: the lease is a Redis key holding this instance's random id, taken and renewed by a script
 * (atomic in Redis), so exactly one instance holds it while it keeps renewing.
 */
export class RedisLeases implements Leases {
  readonly holderId = randomUUID();

  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
  ) {}

  async hold(name: string, ttlMs: number): Promise<boolean> {
    const reply = await this.redis.run('lease hold', (client) =>
      client.eval(HOLD_SCRIPT, { keys: [this.key(name)], arguments: [this.holderId, String(Math.ceil(ttlMs))] }),
    );
    return Number(reply) === 1;
  }

  async release(name: string): Promise<void> {
    await this.redis.run('lease release', (client) => client.eval(RELEASE_SCRIPT, { keys: [this.key(name)], arguments: [this.holderId] }));
  }

  private key(name: string): string {
    return `${this.prefix}lease:${name}`;
  }
}
