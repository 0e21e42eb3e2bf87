import { dataOf } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';

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
