import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Keyv from 'keyv';
import KeyvPostgres from '@keyv/postgres';
import KeyvRedis from '@keyv/redis';
import KeyvSqlite from '@keyv/sqlite';
import { BoundedMap } from './bounded-map';

/** About a hundred users' worth of data-API answers; the oldest go first. */
const MAX_MEMORY_ENTRIES = 10_000;

/**
 * One keyv per namespace: keyv adapters keep the namespace on the adapter itself, so two namespaces must not
 * share one adapter. `url` is STORE_URL (sqlite://, redis://, postgres://) or CACHE_URL (memory, redis://).
 */
export function createKeyv<Value>(url: string, namespace: string): Keyv<Value> {
  // In memory, values are kept as they are: serialising an answer on every write and parsing it on every hit was a
  // sixth of a warm query's CPU. Callers treat cached values as read-only.
  const inMemory = url === 'memory' ? { serialize: undefined, deserialize: undefined } : {};
  // Store failures must surface (a payout record that silently did not save is worse than an error).
  const keyv = new Keyv<Value>({ store: adapterFor(url, namespace), namespace, useKeyPrefix: true, throwOnErrors: true, ...inMemory });
  // keyv also emits adapter errors as events; without a listener Node would treat them as uncaught.
  keyv.on('error', () => undefined);
  return keyv;
}

function adapterFor(url: string, namespace: string): Keyv['store'] {
  if (url === 'memory') return new BoundedMap(MAX_MEMORY_ENTRIES);
  const protocol = /^[a-z]+:/.exec(url)?.[0];
  switch (protocol) {
    case 'sqlite:': {
      const path = url.slice('sqlite://'.length);
      if (path === ':memory:') return new KeyvSqlite({ uri: 'sqlite://:memory:', table: 'bankgraph' });
      // A file of its own beside the relational store's: two SQLite drivers with different locking on one file
      // corrupted it (src/db/database.ts owns `<file>`, keyv gets `<file>.keyv`).
      const file = `${resolve(path)}.keyv`;
      mkdirSync(dirname(file), { recursive: true });
      return new KeyvSqlite({ uri: `sqlite://${file}`, table: 'bankgraph', busyTimeout: 5_000 });
    }
    case 'redis:':
    case 'rediss:':
      return new KeyvRedis(url, { namespace, throwOnConnectError: true, throwOnErrors: true });
    case 'postgres:':
    case 'postgresql:':
      return new KeyvPostgres({ uri: url, table: 'bankgraph' });
    default:
      throw new Error(`unsupported store URL protocol ${protocol}`);
  }
}
