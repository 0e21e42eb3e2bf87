import Keyv from 'keyv';
import { createKeyv } from '../../src/platform/store/keyv.factory';

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

  it('is bounded at 10,000 entries, forgetting the least recently used first', async () => {
    const keyv: Keyv<number> = await createKeyv('memory', 'cache');
    for (let i = 0; i < 10_000; i += 1) await keyv.set(`k${i}`, i);
    expect(await keyv.get('k0')).toBe(0);
    await keyv.set('k10000', 10_000);
    await keyv.set('k10001', 10_001);
    expect(await keyv.get('k0')).toBe(0);
    expect(await keyv.get('k1')).toBeUndefined();
    expect(await keyv.get('k2')).toBeUndefined();
    expect(await keyv.get('k10001')).toBe(10_001);
  });
});
