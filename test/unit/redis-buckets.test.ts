import { RedisBuckets } from '../../src/platform/http/redis-buckets';
import type { RedisConnection } from '../../src/platform/store/redis-connection';

/** A Redis whose every script call waits for `answer` (never, unless given). */
function slowRedis(answer?: Promise<unknown>): { connection: RedisConnection; calls: () => number } {
  let calls = 0;
  const client = {
    eval: () => {
      calls += 1;
      return answer ?? new Promise(() => undefined);
    },
  };
  return { connection: { get: () => Promise.resolve(client) } as unknown as RedisConnection, calls: () => calls };
}

describe('the shared rate-limit buckets (Redis)', () => {
  it('give up on a Redis slower than the configured timeout, and do not ask it again for a while', async () => {
    const redis = slowRedis();
    const buckets = new RedisBuckets(redis.connection, 'p:', 30);
    const started = performance.now();
    await expect(buckets.take('user:1', 1, 10, Date.now())).rejects.toThrow('the rate-limit store timed out after 30 ms');
    expect(performance.now() - started).toBeLessThan(1_000);
    // Paused after the failure: the instance decides alone (undefined) without waiting on Redis again.
    await expect(buckets.take('user:1', 1, 10, Date.now())).resolves.toBeUndefined();
    expect(redis.calls()).toBe(1);
  });

  it('wait as long as the configured timeout allows', async () => {
    const answer = new Promise((resolve) => setTimeout(() => resolve([1, '9']), 100));
    const buckets = new RedisBuckets(slowRedis(answer).connection, 'p:', 2_000);
    await expect(buckets.take('user:1', 1, 10, Date.now())).resolves.toEqual({ allowed: true, tokens: 9 });
  });
});
