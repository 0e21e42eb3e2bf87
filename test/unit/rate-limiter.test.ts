import { addressKey, rateLimitKey } from '../../src/security/principal-key';
import { RateLimiter } from '../../src/security/rate-limiter';

describe('RateLimiter (token bucket)', () => {
  it('allows a burst, then the refill rate, and says when to retry', () => {
    let now = 0;
    const limiter = new RateLimiter(2, 3, 100, () => now);
    expect([1, 2, 3].map(() => limiter.take('a').allowed)).toEqual([true, true, true]);
    expect(limiter.take('a')).toEqual({ allowed: false, retryAfterSeconds: 1 });
    now += 500; // one token back at 2/s
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('a').allowed).toBe(false);
    // Another key has its own bucket.
    expect(limiter.take('b').allowed).toBe(true);
  });

  it('rounds Retry-After up to whole seconds for slow refill rates', () => {
    const limiter = new RateLimiter(0.1, 1, 100, () => 0);
    limiter.take('slow');
    expect(limiter.take('slow')).toEqual({ allowed: false, retryAfterSeconds: 10 });
  });

  it('is off at 0 per second', () => {
    const limiter = new RateLimiter(0, 1);
    expect(Array.from({ length: 100 }, () => limiter.take('x').allowed).every(Boolean)).toBe(true);
  });

  it('bounds its memory: idle buckets go first, then the least recently used', () => {
    let now = 0;
    const limiter = new RateLimiter(1, 2, 10, () => now);
    for (let i = 0; i < 10; i += 1) limiter.take(`k${i}`);
    now += 5_000; // all refilled: nothing worth keeping
    limiter.take('new');
    expect(limiter.size).toBe(1);
    for (let i = 0; i < 20; i += 1) limiter.take(`busy${i}`);
    expect(limiter.size).toBeLessThanOrEqual(10);
  });
});

describe('whose allowance', () => {
  it('keys sessions, merchant keys, and anyone else by address', () => {
    expect(rateLimitKey({ kind: 'merchant', keyId: 'merchant-1' }, () => '10.0.0.1')).toBe('merchant:merchant-1');
    expect(rateLimitKey({ kind: 'anonymous' }, () => '10.0.0.1')).toBe('ip:10.0.0.1');
    expect(rateLimitKey({ kind: 'invalid', reason: 'x' }, () => '::ffff:10.0.0.1')).toBe('ip:10.0.0.1');
  });

  it('groups an IPv6 client by its /64', () => {
    expect(addressKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2::9')).toBe(addressKey('2001:0db8:0001:0002:ffff::1'));
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey(undefined)).toBe('unknown');
  });
});
