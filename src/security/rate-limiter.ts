/**
 * A token bucket per key: `burst` tokens to start, refilled at `perSecond`. One GraphQL operation takes one token,
 * whichever transport it came over, so a client cannot double its allowance by opening a WebSocket.
 *
 * In-process only: with several instances each enforces its own limit, which bounds the total at
 * instances × limit. That is the intent — it protects this process and the provider quota behind it.
 */
export interface RateLimitDecision {
  allowed: boolean;
  /** Whole seconds until one token is back; 0 when allowed. */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    /** Bounds memory when keys are many (one per client IP): beyond this, idle and then oldest buckets go. */
    private readonly maxKeys = 100_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get enabled(): boolean {
    return this.perSecond > 0;
  }

  take(key: string): RateLimitDecision {
    if (!this.enabled) return { allowed: true, retryAfterSeconds: 0 };
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (bucket) {
      bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.perSecond);
      bucket.updatedAt = now;
      // Re-inserting keeps the Map in least-recently-used order, which is what eviction walks.
      this.buckets.delete(key);
    } else {
      bucket = { tokens: this.burst, updatedAt: now };
      if (this.buckets.size >= this.maxKeys) this.evict(now);
    }
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, retryAfterSeconds: 0 };
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond)) };
  }

  get size(): number {
    return this.buckets.size;
  }

  private evict(now: number): void {
    // A bucket that has refilled completely carries no state worth keeping.
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.perSecond >= this.burst) this.buckets.delete(key);
    }
    const excess = this.buckets.size - Math.floor(this.maxKeys * 0.9);
    if (excess <= 0) return;
    let removed = 0;
    for (const key of this.buckets.keys()) {
      if (removed++ >= excess) break;
      this.buckets.delete(key);
    }
  }
}
