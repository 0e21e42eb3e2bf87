import Keyv from 'keyv';
import { ResponseCache } from '../../src/platform/provider/response-cache';

/** A cache store that is down: every call hangs (a Redis client queueing while it reconnects) or fails. */
function brokenStore(mode: 'hang' | 'fail'): Keyv<unknown> {
  const answer = (): Promise<never> => (mode === 'hang' ? new Promise(() => undefined) : Promise.reject(new Error('ECONNREFUSED')));
  const keyv = new Keyv<unknown>({ store: { get: answer, set: answer, delete: answer, clear: answer, on: () => undefined }, throwOnErrors: true });
  keyv.on('error', () => undefined);
  return keyv;
}

describe('ResponseCache when the cache is down', () => {
  it.each(['hang', 'fail'] as const)('answers from the provider within the cache timeout and counts the failure (%s)', async (mode) => {
    const failures: string[] = [];
    const misses: string[] = [];
    const cache = new ResponseCache(
      brokenStore(mode),
      undefined,
      { onFailure: (operation) => failures.push(operation), onMiss: (resource) => misses.push(resource) },
      Date.now,
      50,
    );
    let loads = 0;
    const started = performance.now();
    const entry = await cache.getOrLoad('user-1', { resource: 'accounts' }, 'use', async () => {
      loads += 1;
      return ['account'];
    });
    const elapsed = performance.now() - started;
    expect(entry.value).toEqual(['account']);
    expect(loads).toBe(1);
    expect(misses).toEqual(['accounts']);
    expect(failures).toEqual(['get', 'set']);
    expect(elapsed).toBeLessThan(500);
  });

  it('still serves hits from a working cache, with no failure counted', async () => {
    const failures: string[] = [];
    const cache = new ResponseCache(new Keyv<unknown>(), undefined, { onFailure: (operation) => failures.push(operation) });
    await cache.getOrLoad('user-1', { resource: 'cards' }, 'use', async () => ['card']);
    const again = await cache.getOrLoad('user-1', { resource: 'cards' }, 'use', async () => ['other']);
    expect(again.value).toEqual(['card']);
    expect(failures).toEqual([]);
  });
});
