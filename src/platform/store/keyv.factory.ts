import Keyv from 'keyv';
import { growingLru } from './growing-lru';

/** About a hundred users' worth of data-API answers; the least recently used go first. */
const MAX_MEMORY_ENTRIES = 10_000;

/**
 * One keyv per namespace: keyv adapters keep the namespace on the adapter itself, so two namespaces must not
 * share one adapter. `url` is CACHE_URL (memory, redis://): keyv holds caches only; what must last is in the
 * relational store (src/platform/db/).
 */
export async function createKeyv<Value>(url: string, namespace: string): Promise<Keyv<Value>> {
  // In memory, values are kept as they are: serialising an answer on every write and parsing it on every hit would
  // be paid on every cache hit. Callers treat cached values as read-only.
  const inMemory = url === 'memory' ? { serialize: undefined, deserialize: undefined } : {};
  // Failures reach the caller, which decides what an outage means (the response cache counts it as a miss).
  const keyv = new Keyv<Value>({ store: await adapterFor(url, namespace), namespace, useKeyPrefix: true, throwOnErrors: true, ...inMemory });
  // keyv also emits adapter errors as events; without a listener Node would treat them as uncaught.
  keyv.on('error', () => undefined);
  return keyv;
}

async function adapterFor(url: string, namespace: string): Promise<Keyv['store']> {
  if (url === 'memory') return memoryStore(MAX_MEMORY_ENTRIES);
  const protocol = /^[a-z]+:/.exec(url)?.[0];
  switch (protocol) {
    case 'redis:':
    case 'rediss:': {
      // Loaded only when configured: with the default in-memory cache, the Redis client is never loaded.
      const { default: KeyvRedis } = await import('@keyv/redis');
      return new KeyvRedis(url, { namespace, throwOnConnectError: true, throwOnErrors: true });
    }
    default:
      throw new Error(`unsupported cache URL protocol ${protocol}`);
  }
}

/**
 * keyv's in-memory store: keyv keeps each entry's expiry itself and drops an expired one only when it is read
 * again, so this bounds how many entries there are. keyv passes a TTL as `set`'s third argument, which lru-cache
 * would take for its options; it is not handed on.
 */
function memoryStore(max: number): Keyv['store'] {
  const entries = growingLru<string, object>(max);
  return {
    get: (key: string) => entries.get(key),
    set: (key: string, value: object) => entries.set(key, value) && true,
    delete: (key: string) => entries.delete(key),
    clear: () => entries.clear(),
  };
}
