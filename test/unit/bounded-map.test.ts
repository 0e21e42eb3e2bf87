import Keyv from 'keyv';
import { BoundedMap } from '../../src/platform/store/bounded-map';
import { createKeyv } from '../../src/platform/store/keyv.factory';
import { RecentMap } from '../../src/platform/store/recent-map';

describe('BoundedMap', () => {
  it('forgets the entry written longest ago once it holds more than its limit', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1).set('b', 2).set('a', 3).set('c', 4);
    expect([...map.entries()]).toEqual([
      ['a', 3],
      ['c', 4],
    ]);
  });
});

describe('RecentMap', () => {
  it('answers an entry for ttlMs after it was set, then no longer, and forgets the entries a predicate matches', () => {
    let now = 1_000;
    const map = new RecentMap<string, { userId: string }>(10, 500, () => now);
    map.set('s1', { userId: 'u1' });
    map.set('s2', { userId: 'u2' });
    now += 499;
    expect(map.get('s1')).toEqual({ userId: 'u1' });
    map.deleteWhere((session) => session.userId === 'u2');
    expect(map.get('s2')).toBeUndefined();
    now += 1;
    expect(map.get('s1')).toBeUndefined();
  });
});

describe('the in-memory cache store', () => {
  it('hands back the value it was given, without a JSON round trip, until it expires', async () => {
    const keyv: Keyv<{ amount: string }> = await createKeyv('memory', 'cache');
    const value = { amount: '100.10' };
    await keyv.set('k', value, 30);
    expect(await keyv.get('k')).toBe(value);
    // keyv reads expiry against Date.now: step it past the TTL instead of waiting.
    const later = Date.now() + 40;
    const clock = jest.spyOn(Date, 'now').mockReturnValue(later);
    try {
      expect(await keyv.get('k')).toBeUndefined();
    } finally {
      clock.mockRestore();
    }
  });
});
