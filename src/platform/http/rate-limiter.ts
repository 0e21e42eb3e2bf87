/**
 * A token bucket per key: `burst` tokens to start, refilled at `perSecond`. One GraphQL operation takes one token,
 * whichever transport it came over, so a client cannot double its allowance by opening a WebSocket.
 *
 * With `shared` buckets (Redis, when CACHE_URL is Redis) every instance spends from the same bucket, so a principal's
 * allowance is the same whichever instance and however many instances it reaches, over HTTP and WebSocket alike:
 * `admit` waits for the shared bucket's answer. When the shared store fails or is slow, it falls back to this
 * instance's own buckets: the limit holds per instance, and requests are not refused for an outage of the limiter's
 * store.
 */
import type { LRUCache } from 'lru-cache';
import { growingLru } from '../store/growing-lru';

export interface RateLimitDecision {
  allowed: boolean;
  /** Whole seconds until one token is back; 0 when allowed. */
  retryAfterSeconds: number;
}

/** Buckets kept outside the process (src/platform/http/redis-buckets.ts). */
export interface SharedBuckets {
  /**
   * Takes one token, if there is one, from `key`'s bucket refilled up to `nowMs`; the tokens left after. Undefined
   * while the store is known to be unreachable (it failed moments ago); a rejection is a fresh failure.
   */
  take(key: string, perSecond: number, burst: number, nowMs: number): Promise<{ allowed: boolean; tokens: number } | undefined>;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class RateLimiter {
  /**
   * Least recently used first. A bucket unused for as long as an empty one takes to refill is full, carries no state
   * worth keeping, and so expires; reading a bucket renews it.
   */
  private readonly buckets: LRUCache<string, Bucket>;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    /** Bounds memory when keys are many (one per client IP): beyond this, idle and then oldest buckets go. */
    private readonly maxKeys = 100_000,
    /** Milliseconds; with shared buckets, a clock every instance agrees on (wall time). */
    private readonly now: () => number = () => performance.now(),
    private readonly shared?: SharedBuckets,
    private readonly onSharedFailure: (error: unknown) => void = () => undefined,
  ) {
    const refillMs = perSecond > 0 ? Math.max(1, Math.ceil((burst / perSecond) * 1000)) : undefined;
    // ttlResolution 0: expiry reads this limiter's clock itself, never a value cached from it.
    this.buckets = growingLru(maxKeys, { ttl: refillMs, updateAgeOnGet: true, ttlResolution: 0, perf: { now } });
  }

  get enabled(): boolean {
    return this.perSecond > 0;
  }

  /** Decides from the shared bucket when there is one (from this instance's own when it cannot be reached). */
  async admit(key: string): Promise<RateLimitDecision> {
    if (!this.enabled) return { allowed: true, retryAfterSeconds: 0 };
    const now = this.now();
    if (!this.shared) return this.takeLocal(key, now);
    let answer: { allowed: boolean; tokens: number } | undefined;
    try {
      answer = await this.shared.take(key, this.perSecond, this.burst, now);
    } catch (error) {
      this.onSharedFailure(error);
    }
    if (!answer) return this.takeLocal(key, now);
    this.copy(key, answer.tokens, now);
    return answer.allowed ? { allowed: true, retryAfterSeconds: 0 } : this.refusal(answer.tokens);
  }

  get size(): number {
    return this.buckets.size;
  }

  private takeLocal(key: string, now: number): RateLimitDecision {
    const bucket = this.touch(key, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, retryAfterSeconds: 0 };
    }
    return this.refusal(bucket.tokens);
  }

  /** The key's bucket refilled up to `now`, most recently used. */
  private touch(key: string, now: number): Bucket {
    let bucket = this.buckets.get(key);
    if (bucket) {
      bucket.tokens = Math.min(this.burst, bucket.tokens + (Math.max(0, now - bucket.updatedAt) / 1000) * this.perSecond);
      bucket.updatedAt = Math.max(bucket.updatedAt, now);
      return bucket;
    }
    if (this.buckets.size >= this.maxKeys) this.makeRoom();
    bucket = { tokens: this.burst, updatedAt: now };
    this.buckets.set(key, bucket);
    return bucket;
  }

  /** The shared bucket's answer replaces this instance's copy, which then knows what the other instances spent. */
  private copy(key: string, tokens: number, at: number): void {
    const bucket = this.touch(key, at);
    bucket.tokens = Math.min(bucket.tokens, tokens);
  }

  private refusal(tokens: number): RateLimitDecision {
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / this.perSecond)) };
  }

  /** Full buckets go first; then the least recently used, down to nine tenths, so this runs once per many new keys. */
  private makeRoom(): void {
    this.buckets.purgeStale();
    const keep = Math.floor(this.maxKeys * 0.9);
    while (this.buckets.size > keep) this.buckets.pop();
  }
}
