import Keyv from 'keyv';
import { SessionStore, type Session } from '../../src/store/session.store';

function countingStore(): { keyv: Keyv<Session>; reads: () => number } {
  const keyv = new Keyv<Session>();
  let reads = 0;
  const get = keyv.get.bind(keyv);
  keyv.get = ((key: string) => {
    reads += 1;
    return get(key);
  }) as typeof keyv.get;
  return { keyv, reads: () => reads };
}

const tokens = { accessToken: 'a', refreshToken: 'r', expiresAtMs: Date.now() + 3_600_000 };

describe('SessionStore', () => {
  it('reads the store once for a burst of requests, and again once the memory lapses', async () => {
    const { keyv, reads } = countingStore();
    const store = new SessionStore(keyv, 50);
    const { sessionToken } = await store.create('user_1', tokens);
    await Promise.all([store.get(sessionToken), store.get(sessionToken)]);
    await store.get(sessionToken);
    expect(reads()).toBeLessThanOrEqual(2);
    const before = reads();
    // The memory lapses by Date.now: step it past the 50 ms instead of waiting.
    const later = Date.now() + 60;
    const clock = jest.spyOn(Date, 'now').mockReturnValue(later);
    try {
      await store.get(sessionToken);
    } finally {
      clock.mockRestore();
    }
    expect(reads()).toBe(before + 1);
  });

  it('forgets a session at once on logout, and always reads the store when asked for fresh data', async () => {
    const { keyv, reads } = countingStore();
    const store = new SessionStore(keyv, 60_000);
    const { sessionToken } = await store.create('user_1', tokens);
    expect((await store.get(sessionToken))?.userId).toBe('user_1');
    const before = reads();
    await store.get(sessionToken, { fresh: true });
    expect(reads()).toBe(before + 1);
    await store.delete(sessionToken);
    expect(await store.get(sessionToken)).toBeUndefined();
  });

  it('serves updated tokens right after an update', async () => {
    const store = new SessionStore(new Keyv<Session>(), 60_000);
    const { sessionToken } = await store.create('user_1', tokens);
    await store.get(sessionToken);
    await store.updateTokens(sessionToken, { ...tokens, accessToken: 'b' });
    expect((await store.get(sessionToken))?.tokens.accessToken).toBe('b');
  });
});
