import { randomUUID } from 'node:crypto';
import { dataOf } from '../helpers/money';
import { deleteRedisKeys, REDIS_URL, requireRedis } from '../helpers/redis';
import { startStack, type Stack } from '../helpers/stack';
import { startTcpRelay } from '../helpers/tcp-relay';
import { waitFor } from '../helpers/wait-for';

/** Nothing listens here: the cache's Redis is down for the whole test. */
const DOWN_REDIS = 'redis://127.0.0.1:1';

describe('a cache outage', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { CACHE_URL: DOWN_REDIS } });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('is not a data outage: reads go to the provider, each cache failure is counted, and the instance stays ready', async () => {
    const session = await stack.signIn('john', 'doe');
    const started = performance.now();
    const first = dataOf(await stack.graphql<{ viewer: { accounts: { id: string }[] } }>('{ viewer { accounts { id } } }', {}, session));
    const second = dataOf(await stack.graphql<{ viewer: { accounts: { id: string }[] } }>('{ viewer { accounts { id } } }', {}, session));
    expect(first.viewer.accounts.length).toBeGreaterThan(0);
    expect(second).toEqual(first);
    // Two reads and two writes of the cache, each given up after 250 ms at most.
    expect(performance.now() - started).toBeLessThan(4_000);
    const metrics = await (await fetch(`${stack.gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/bankgraph_cache_failures_total\{operation="get"\} [1-9]/);
    expect((await fetch(`${stack.gateway.url}/readyz`)).status).toBe(200);
  });
});

describe('readiness with Redis unreachable', () => {
  const prefix = `bankgraph-test-ready-${randomUUID().slice(0, 8)}:`;

  it('stays ready with the cache down, and says the cache is degraded', async () => {
    const stack = await startStack({ env: { CACHE_URL: DOWN_REDIS, REDIS_KEY_PREFIX: prefix } });
    try {
      const started = performance.now();
      const ready = await fetch(`${stack.gateway.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready', degraded: ['cache (CACHE_URL)'] });
      // The cache is given as long as a cache read is (250 ms), not the 2 s a required dependency gets.
      expect(performance.now() - started).toBeLessThan(1_500);
    } finally {
      await stack.close();
    }
  });

  it('is not ready while the pubsub (events, revocations across instances) is unreachable, and ready again once it answers', async () => {
    await requireRedis('The readiness tests');
    const relay = await startTcpRelay({ host: '127.0.0.1', port: Number(new URL(REDIS_URL).port) });
    let stack: Stack | undefined;
    try {
      stack = await startStack({ env: { PUBSUB_URL: `redis://127.0.0.1:${relay.port}`, REDIS_KEY_PREFIX: prefix } });
      const readyz = async (): Promise<{ status: number; body: unknown }> => {
        const answer = await fetch(`${stack!.gateway.url}/readyz`);
        return { status: answer.status, body: await answer.json() };
      };
      expect(await readyz()).toEqual({ status: 200, body: { status: 'ready' } });
      await relay.cut();
      const started = performance.now();
      const unready = await waitFor(async () => {
        const answer = await readyz();
        return answer.status === 503 ? answer : undefined;
      }, '/readyz to answer 503');
      expect(unready.body).toEqual({ status: 'unavailable', reason: 'not reachable: pubsub (PUBSUB_URL)' });
      // A probe gets its answer within the readiness timeout, not the Redis command timeout.
      expect(performance.now() - started).toBeLessThan(4_000);
      await relay.restore();
      await waitFor(async () => ((await readyz()).status === 200 ? true : undefined), '/readyz to answer 200 again', 15_000);
    } finally {
      await stack?.close();
      await relay.close();
      await deleteRedisKeys(prefix);
    }
  }, 30_000);
});
