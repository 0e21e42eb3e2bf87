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
    stack = await startStack({ env: { OPERATION_TIMEOUT_MS: '1500', PROVIDER_BREAKER_FAILURES: '3', PROVIDER_BREAKER_COOLDOWN_MS: '60000' } });
    session = await stack.signIn('john', 'doe');
    // Once without faults, so the deadline below is spent on the slow route alone, not on a cold token or query plan.
    await ask();
  });

  afterEach(async () => {
    await stack.sandboxJson('DELETE', '/sandbox/faults');
  });

  afterAll(async () => {
    await stack?.close();
  });

  async function ask(): Promise<{ answer: Answer; ms: number }> {
    const started = performance.now();
    const result = await stack.graphql('{ viewer { accounts { id: accountId balance { current } } } }', {}, session, { 'cache-control': 'no-cache' });
    return { answer: result as Answer, ms: performance.now() - started };
  }

  it('answers by OPERATION_TIMEOUT_MS with partial data and UPSTREAM_UNAVAILABLE where the provider was too slow', async () => {
    await injectFault(stack, { match: 'GET /data/v1/accounts/*/balance', latencyMs: 5_000 });
    const { answer, ms } = await ask();
    expect(ms).toBeLessThan(3_000);
    expect(answer.data?.viewer.accounts.length).toBeGreaterThan(0);
    for (const account of answer.data!.viewer.accounts) expect(account.balance).toBeNull();
    expect(answer.errors?.length).toBe(answer.data!.viewer.accounts.length);
    for (const error of answer.errors!) {
      expect(error.path).toEqual(['viewer', 'accounts', expect.any(Number), 'balance']);
      expect(error.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    }
  });

  it("opens the connection's breaker on a failing route: fails fast, shows it in /metrics, and /readyz stays 200", async () => {
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
    expect(metrics).toMatch(/bankgraph_provider_connection_circuits_open\{route="data.accountBalance"\} 1/);
    expect((await fetch(`${stack.gateway.url}/readyz`)).status).toBe(200);
  });
});

interface TransactionsAnswer {
  data?: { viewer: { account: { id: string; transactions: { totalCount: number } } | null } } | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

/** Circuit breakers per bank connection: one user's failing data stays theirs; a provider failing for all is still spared. */
describe('circuit breakers per bank connection', () => {
  const TRANSACTIONS = 'query ($id: ID!) { viewer { account(id: $id) { id: accountId transactions(first: 1) { totalCount } } } }';

  async function firstAccount(stack: Stack, session: string): Promise<string> {
    const answer = await stack.graphql<{ viewer: { accounts: { id: string }[] } }>('{ viewer { accounts { id: accountId } } }', {}, session);
    return answer.data!.viewer.accounts[0]!.id;
  }

  function transactions(stack: Stack, session: string, id: string): Promise<TransactionsAnswer> {
    return stack.graphql(TRANSACTIONS, { id }, session, { 'cache-control': 'no-cache' }) as Promise<TransactionsAnswer>;
  }

  async function transactionCalls(stack: Stack, accountId?: string): Promise<number> {
    const { requests } = await stack.sandboxJson<{ requests: { path: string }[] }>('GET', '/sandbox/requests');
    return requests.filter((request) => /\/transactions$/.test(request.path) && (accountId === undefined || request.path.includes(accountId))).length;
  }

  describe('one user whose account fails', () => {
    let stack: Stack;
    afterAll(async () => {
      await stack?.close();
    });

    it("opens that connection's breaker while another user's query on the same route answers", async () => {
      stack = await startStack({ env: { PROVIDER_BREAKER_FAILURES: '3', PROVIDER_BREAKER_COOLDOWN_MS: '60000' } });
      const john = await stack.signIn('john', 'doe');
      const jane = await stack.signIn('jane', 'doe');
      const johns = await firstAccount(stack, john);
      const janes = await firstAccount(stack, jane);
      await injectFault(stack, { match: `GET /data/v1/accounts/${johns}/transactions`, status: 503 });

      for (let i = 0; i < 2; i += 1) expect((await transactions(stack, john, johns)).errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      const sentForJohn = await transactionCalls(stack, johns);
      const refused = await transactions(stack, john, johns);
      expect(refused.errors?.[0]?.message).toMatch(/not calling it/);
      expect(await transactionCalls(stack, johns)).toBe(sentForJohn);

      const answered = await transactions(stack, jane, janes);
      expect(answered.errors).toBeUndefined();
      expect(answered.data?.viewer.account?.transactions.totalCount).toBeGreaterThan(0);
      const metrics = await (await fetch(`${stack.gateway.url}/metrics`)).text();
      expect(metrics).toMatch(/bankgraph_provider_connection_circuits_open\{route="data.accountTransactions"\} 1/);
      expect(metrics).not.toMatch(/bankgraph_provider_circuit_state\{route="data.accountTransactions",state="open"\} 1/);
    });
  });

  describe('a route failing for everyone', () => {
    let stack: Stack;
    afterAll(async () => {
      await stack?.close();
    });

    it('still opens for every connection once it has failed for PROVIDER_BREAKER_ROUTE_CONNECTIONS of them, and then spares the provider', async () => {
      stack = await startStack({
        env: { PROVIDER_BREAKER_FAILURES: '3', PROVIDER_BREAKER_COOLDOWN_MS: '60000', PROVIDER_BREAKER_ROUTE_CONNECTIONS: '2' },
      });
      const users = await Promise.all(
        ['john', 'jane', 'lee', 'sam'].map(async (name) => {
          const session = await stack.signIn(name, 'doe');
          return { name, session, account: await firstAccount(stack, session) };
        }),
      );
      const [john, jane, lee, sam] = users as [(typeof users)[0], (typeof users)[0], (typeof users)[0], (typeof users)[0]];
      await injectFault(stack, { match: 'GET /data/v1/accounts/*/transactions', status: 503 });

      // One connection failing is its own: the next user's call still reaches the provider.
      expect((await transactions(stack, john.session, john.account)).errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      expect((await transactions(stack, jane.session, jane.account)).errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(await transactionCalls(stack, jane.account)).toBeGreaterThan(0);

      // Two connections have failed with nothing succeeding between: the route's next failure opens it for everyone.
      expect((await transactions(stack, lee.session, lee.account)).errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      const sent = await transactionCalls(stack);
      const refused = await transactions(stack, sam.session, sam.account);
      expect(refused.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(refused.errors?.[0]?.message).toMatch(/not calling it/);
      expect(await transactionCalls(stack)).toBe(sent);
      expect(await transactionCalls(stack, sam.account)).toBe(0);
      const metrics = await (await fetch(`${stack.gateway.url}/metrics`)).text();
      expect(metrics).toMatch(/bankgraph_provider_circuit_state\{route="data.accountTransactions",state="open"\} 1/);
    });
  });
});
