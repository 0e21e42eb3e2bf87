import { withTimeout, type RedisConnection } from '../store/redis-connection';
import type { SharedBuckets } from './rate-limiter';

/** After a failure, Redis is not asked again for this long: an outage must not add a timeout to every request. */
const PAUSE_AFTER_FAILURE_MS = 5_000;

/**
 * One token bucket, refilled and taken from atomically. The caller's clock is used (wall time, the same on every
 * instance within the usual skew); a bucket never goes back in time, so a slow clock only refills it later.
 * Returns {1 or 0, tokens left} (tokens as a string: Lua numbers come back as integers).
 */
const TAKE_SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
if now > at then
  tokens = math.min(burst, tokens + (now - at) / 1000 * rate)
  at = now
end
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return {allowed, tostring(tokens)}
`;

/**
 * Rate-limit buckets in Redis (CACHE_URL), shared by every instance. Keys are `<prefix>ratelimit:<principal key>`
 * and expire once their bucket would be full again, so idle principals leave nothing behind. One instance serves
 * every limiter of a gateway (their keys differ: `sign-in:`, `webhook:`); the gateway closes its connection.
 */
export class RedisBuckets implements SharedBuckets {
  private pausedUntil = 0;

  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    /** A decision waits this long for Redis before the instance decides alone (RATE_LIMIT_STORE_TIMEOUT_MS). */
    private readonly timeoutMs: number,
  ) {}

  async take(key: string, perSecond: number, burst: number, nowMs: number): Promise<{ allowed: boolean; tokens: number } | undefined> {
    if (Date.now() < this.pausedUntil) return undefined;
    try {
      const taking = this.redis
        .get()
        .then((client) =>
          client.eval(TAKE_SCRIPT, { keys: [`${this.prefix}ratelimit:${key}`], arguments: [String(perSecond), String(burst), String(Math.floor(nowMs))] }),
        );
      const [allowed, tokens] = (await withTimeout(taking, 'the rate-limit store', this.timeoutMs)) as [number, string];
      return { allowed: allowed === 1, tokens: Number(tokens) };
    } catch (error) {
      this.pausedUntil = Date.now() + PAUSE_AFTER_FAILURE_MS;
      throw error;
    }
  }
}
