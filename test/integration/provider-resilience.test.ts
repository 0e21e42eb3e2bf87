import { injectFault } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';

interface Answer {
  data?: { viewer: { accounts: { id: string; balance: { current: string } | null }[] } } | null;
  errors?: { path?: (string | number)[]; extensions?: Record<string, unknown> }[];
}

/** A slow or dead provider costs an operation a bounded time, and the gateway stays ready while it does. */
describe('a slow or dead provider', () => {
  let stack: Stack;
  let session: string;

  beforeAll(async () => {
    stack = await startStack({ env: { OPERATION_TIMEOUT_MS: '1000', PROVIDER_BREAKER_FAILURES: '3', PROVIDER_BREAKER_COOLDOWN_MS: '60000' } });
    session = await stack.signIn('john', 'doe');
  });

  afterEach(async () => {
    await stack.sandboxJson('DELETE', '/sandbox/faults');
  });

  afterAll(async () => {
    await stack?.close();
  });

  async function ask(): Promise<{ answer: Answer; ms: number }> {
    const started = performance.now();
    const result = await stack.graphql('{ viewer { accounts { id balance { current } } } }', {}, session, { 'cache-control': 'no-cache' });
    return { answer: result as Answer, ms: performance.now() - started };
  }

  it('answers by OPERATION_TIMEOUT_MS with partial data and UPSTREAM_UNAVAILABLE where the provider was too slow', async () => {
    await injectFault(stack, { match: 'GET /data/v1/accounts/*/balance', latencyMs: 5_000 });
    const { answer, ms } = await ask();
    expect(ms).toBeLessThan(2_500);
    expect(answer.data?.viewer.accounts.length).toBeGreaterThan(0);
    for (const account of answer.data!.viewer.accounts) expect(account.balance).toBeNull();
    expect(answer.errors?.length).toBe(answer.data!.viewer.accounts.length);
    for (const error of answer.errors!) {
      expect(error.path).toEqual(['viewer', 'accounts', expect.any(Number), 'balance']);
      expect(error.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    }
  });

  it('opens a breaker on a failing route: fails fast, shows it in /metrics, and /readyz stays 200', async () => {
    await injectFault(stack, { match: 'GET /data/v1/accounts/*/balance', status: 503 });
    const counted = async (): Promise<number> => {
      const { requests } = await stack.sandboxJson<{ requests: { path: string }[] }>('GET', '/sandbox/requests');
      return requests.filter((request) => /\/balance$/.test(request.path)).length;
    };
    for (let i = 0; i < 3; i += 1) await ask();
    const before = await counted();
    const { answer } = await ask();
    expect(await counted()).toBe(before);
    expect(answer.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    const metrics = await (await fetch(`${stack.gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/bankgraph_provider_circuit_state\{route="data.accountBalance",state="open"\} 1/);
    expect((await fetch(`${stack.gateway.url}/readyz`)).status).toBe(200);
  });
});
