import { addressKey, principalKey } from '../../src/platform/http/principal-key';
import { RateLimiter, type SharedBuckets } from '../../src/platform/http/rate-limiter';

describe('RateLimiter (token bucket)', () => {
  it('allows a burst, then the refill rate, and says when to retry', async () => {
    let now = 0;
    const limiter = new RateLimiter(2, 3, 100, () => now);
    expect([(await limiter.admit('a')).allowed, (await limiter.admit('a')).allowed, (await limiter.admit('a')).allowed]).toEqual([true, true, true]);
    expect(await limiter.admit('a')).toEqual({ allowed: false, retryAfterSeconds: 1 });
    now += 500; // one token back at 2/s
    expect((await limiter.admit('a')).allowed).toBe(true);
    expect((await limiter.admit('a')).allowed).toBe(false);
    // Another key has its own bucket.
    expect((await limiter.admit('b')).allowed).toBe(true);
  });

  it('rounds Retry-After up to whole seconds for slow refill rates', async () => {
    const limiter = new RateLimiter(0.1, 1, 100, () => 0);
    await limiter.admit('slow');
    expect(await limiter.admit('slow')).toEqual({ allowed: false, retryAfterSeconds: 10 });
  });

  it('is off at 0 per second', async () => {
    const limiter = new RateLimiter(0, 1);
    const decisions = await Promise.all(Array.from({ length: 100 }, () => limiter.admit('x')));
    expect(decisions.every((decision) => decision.allowed)).toBe(true);
  });

  it('bounds its memory: idle buckets go first, then the least recently used', async () => {
    // Not 0: lru-cache, which keeps the buckets, reads an entry stamped at time 0 as never expiring.
    let now = 1_000;
    const limiter = new RateLimiter(1, 2, 10, () => now);
    for (let i = 0; i < 10; i += 1) await limiter.admit(`k${i}`);
    now += 5_000; // all refilled: nothing worth keeping
    await limiter.admit('new');
    expect(limiter.size).toBe(1);
    for (let i = 0; i < 20; i += 1) await limiter.admit(`busy${i}`);
    expect(limiter.size).toBeLessThanOrEqual(10);
  });

  it('keeps a drained bucket that is still in use while new keys push others out', async () => {
    const now = 1_000;
    const limiter = new RateLimiter(1, 2, 10, () => now);
    await limiter.admit('hot');
    await limiter.admit('hot');
    for (let i = 0; i < 30; i += 1) {
      await limiter.admit(`new${i}`);
      expect((await limiter.admit('hot')).allowed).toBe(false);
    }
    expect(limiter.size).toBeLessThanOrEqual(10);
  });
});

describe('RateLimiter with shared buckets', () => {
  /** A store's buckets of 3 tokens, never refilled (the limiters' clocks stand still). */
  function sharedStore(): SharedBuckets & { down: boolean } {
    const tokens = new Map<string, number>();
    const store = {
      down: false,
      async take(key: string) {
        if (store.down) throw new Error('store down');
        const left = tokens.get(key) ?? 3;
        tokens.set(key, Math.max(0, left - 1));
        return { allowed: left >= 1, tokens: Math.max(0, left - 1) };
      },
    };
    return store;
  }

  it('decides by the shared bucket, which other instances spend from too', async () => {
    const shared = sharedStore();
    const one = new RateLimiter(1, 3, 100, () => 0, shared);
    const two = new RateLimiter(1, 3, 100, () => 0, shared);
    const decisions = [await one.admit('u'), await two.admit('u'), await one.admit('u'), await two.admit('u')];
    expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, false]);
  });

  it('falls back to its own buckets when the shared store fails, and reports the failure', async () => {
    const shared = sharedStore();
    shared.down = true;
    const failures: unknown[] = [];
    const limiter = new RateLimiter(
      1,
      2,
      100,
      () => 0,
      shared,
      (error) => failures.push(error),
    );
    const decisions = [await limiter.admit('u'), await limiter.admit('u'), await limiter.admit('u')];
    expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, false]);
    expect(failures).toHaveLength(3);
  });
});

describe('whose allowance', () => {
  it('keys a user by the user, whichever session or token they came with', () => {
    expect(principalKey({ kind: 'user', userId: 'u1', sessionKey: 'session-a' }, () => '10.0.0.1')).toBe('user:u1');
    expect(principalKey({ kind: 'user', userId: 'u1', sessionKey: 'session-b' }, () => '10.0.0.2')).toBe('user:u1');
    expect(principalKey({ kind: 'user', userId: 'u1', expiresAtMs: 1 }, () => '10.0.0.3')).toBe('user:u1');
  });

  it('keys sessions, merchant keys, and anyone else by address', () => {
    expect(principalKey({ kind: 'merchant', keyId: 'merchant-1' }, () => '10.0.0.1')).toBe('merchant:merchant-1');
    expect(principalKey({ kind: 'anonymous' }, () => '10.0.0.1')).toBe('ip:10.0.0.1');
    expect(principalKey({ kind: 'invalid', reason: 'x' }, () => '::ffff:10.0.0.1')).toBe('ip:10.0.0.1');
  });

  it('groups an IPv6 client by its /64', () => {
    expect(addressKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2::9')).toBe(addressKey('2001:0db8:0001:0002:ffff::1'));
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey(undefined)).toBe('unknown');
  });
});
