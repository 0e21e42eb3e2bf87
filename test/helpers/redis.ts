import { createClient } from 'redis';

export const REDIS_URL = 'redis://127.0.0.1:6379';

/** Fails (never skips) with how to start Redis when none answers at REDIS_URL; `who` names the tests that need it. */
export async function requireRedis(who: string): Promise<void> {
  const client = createClient({ url: REDIS_URL, socket: { connectTimeout: 2_000, reconnectStrategy: false } });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    throw new Error(
      `Redis is not reachable at ${REDIS_URL} (${String(error)}). ${who} need it: ` +
        'start it with `redis-server --daemonize yes --port 6379 --save ""` (.ci/run does this before npm test).',
      { cause: error },
    );
  } finally {
    await client.close().catch(() => client.destroy());
  }
}

/** The names of the keys matching `match` (a Redis glob) in the database of `url`. */
export async function redisKeys(match: string, url = REDIS_URL): Promise<string[]> {
  const client = createClient({ url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const names: string[] = [];
    for await (const keys of client.scanIterator({ MATCH: match, COUNT: 500 })) names.push(...keys);
    return names;
  } finally {
    await client.close();
  }
}

/** Deletes every key a test run wrote under `prefix` (its gateways' REDIS_KEY_PREFIX), so runs sharing a Redis leave nothing behind. */
export async function deleteRedisKeys(prefix: string, url = REDIS_URL): Promise<void> {
  const client = createClient({ url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) if (keys.length > 0) await client.del(keys);
  } finally {
    await client.close();
  }
}
