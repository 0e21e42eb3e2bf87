import { growingLru } from '../../../../src/platform/store/growing-lru';

describe('growingLru', () => {
  it('keeps at most its number of entries, forgetting the least recently used', () => {
    const cache = growingLru<string, number>(3);
    for (const key of ['a', 'b', 'c']) cache.set(key, 1);
    cache.get('a');
    cache.set('d', 1);
    expect([...cache.keys()].sort()).toEqual(['a', 'c', 'd']);
    expect(cache.size).toBe(3);
  });

  it('passes its other options on (an entry expires after its ttl)', () => {
    let now = 1_000;
    const cache = growingLru<string, number>(10, { ttl: 100, ttlResolution: 0, perf: { now: () => now } });
    cache.set('a', 1);
    now += 101;
    expect(cache.get('a')).toBeUndefined();
  });
});
