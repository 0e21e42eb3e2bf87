import type { createClient } from 'redis';
import type { SharedBuckets } from './rate-limiter';

type RedisClient = ReturnType<typeof createClient>;

/** A rate-limit decision waits this long for Redis before the instance decides alone. */
const COMMAND_TIMEOUT_MS = 250;
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
 * every limiter of a gateway (their keys differ: `sign-in:`, `webhook:`); the gateway closes it.
 */
export class RedisBuckets implements SharedBuckets {
  private client: RedisClient | undefined;
  private connecting: Promise<RedisClient> | undefined;
  private pausedUntil = 0;

  constructor(
    private readonly url: string,
    private readonly prefix: string,
  ) {}

  async take(key: string, perSecond: number, burst: number, nowMs: number): Promise<{ allowed: boolean; tokens: number } | undefined> {
    if (Date.now() < this.pausedUntil) return undefined;
    try {
      const answer = await withTimeout(
        (async () => {
          const client = await this.connected();
          return client.eval(TAKE_SCRIPT, {
            keys: [`${this.prefix}ratelimit:${key}`],
            arguments: [String(perSecond), String(burst), String(Math.floor(nowMs))],
          });
        })(),
      );
      const [allowed, tokens] = answer as [number, string];
      return { allowed: allowed === 1, tokens: Number(tokens) };
    } catch (error) {
      this.pausedUntil = Date.now() + PAUSE_AFTER_FAILURE_MS;
      throw error;
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.connecting = undefined;
    if (!client) return;
    // A client still trying to connect would wait for Redis to close; destroying it does not.
    if (client.isReady) await client.close().catch(() => client.destroy());
    else client.destroy();
  }

  private connected(): Promise<RedisClient> {
    this.connecting ??= (async () => {
      // Loaded only when configured, as the other Redis users do.
      const { createClient } = await import('redis');
      const client = createClient({
        url: this.url,
        socket: { connectTimeout: 2_000, reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2_000) },
      });
      // Failures reach take()'s caller, which counts and logs them; the client also emits them as events.
      client.on('error', () => undefined);
      this.client = client;
      await client.connect();
      return client;
    })().catch((error: unknown) => {
      this.connecting = undefined;
      throw error;
    });
    return this.connecting;
  }
}

function withTimeout<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the rate-limit store did not answer within ${COMMAND_TIMEOUT_MS} ms`)), COMMAND_TIMEOUT_MS);
    timer.unref();
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
