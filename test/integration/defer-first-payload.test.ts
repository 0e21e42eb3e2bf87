import { injectFault } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';

interface Payload {
  data?: { viewer: { accounts: { id: string; balance?: unknown; transactions?: unknown }[] } };
  hasNext?: boolean;
  incremental?: { data?: Record<string, unknown>; path?: (string | number)[]; label?: string }[];
}

/** The payloads of one operation over multipart HTTP, each with the milliseconds since the request was sent. */
async function payloads(stack: Stack, token: string, query: string): Promise<{ at: number; payload: Payload }[]> {
  const started = performance.now();
  const response = await fetch(`${stack.gateway.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'multipart/mixed;deferSpec=20220824,application/json',
      authorization: `Bearer ${token}`,
      'cache-control': 'no-cache',
    },
    body: JSON.stringify({ query }),
  });
  expect(response.headers.get('content-type')).toContain('multipart/mixed');
  const seen: { at: number; payload: Payload }[] = [];
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of response.body!) {
    text += decoder.decode(chunk as Uint8Array, { stream: true });
    const parts = text.split('\r\n--graphql');
    text = parts.pop()!;
    for (const part of parts) {
      const body = part.slice(part.indexOf('\r\n\r\n') + 4);
      if (body.trim().startsWith('{')) seen.push({ at: performance.now() - started, payload: JSON.parse(body) as Payload });
    }
  }
  return seen;
}

/**
 * Only what the first payload needs is waited for: the deferred parts are their own provider calls, each arriving as
 * it finishes, not all at the end.
 */
describe('where the first payload comes from', () => {
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_PER_SECOND: '0' } });
    token = await stack.signIn('john', 'doe');
  });

  afterEach(async () => {
    await stack.sandboxJson('DELETE', '/sandbox/faults');
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('gives the balances first when only the slower transaction lists are deferred', async () => {
    await injectFault(stack, { match: 'GET /data/v1/accounts/*/transactions', latencyMs: 600 });
    const seen = await payloads(
      stack,
      token,
      'query { viewer { accounts { id balance { current } ... @defer(label: "transactions") { transactions(first: 3) { nodes { id } } } } } }',
    );
    const [first, ...later] = seen;
    expect(first!.payload.hasNext).toBe(true);
    expect(first!.payload.data!.viewer.accounts.every((account) => account.balance && account.transactions === undefined)).toBe(true);
    const parts = later.flatMap(({ payload }) => payload.incremental ?? []);
    expect(parts.map((part) => part.label)).toEqual(first!.payload.data!.viewer.accounts.map(() => 'transactions'));
    expect(later.at(-1)!.at - first!.at).toBeGreaterThan(400);
  });

  it('sends each deferred part when its own calls finish: a fast one does not wait for a slow one', async () => {
    await injectFault(stack, { match: 'GET /data/v1/accounts/*/transactions', latencyMs: 800 });
    const seen = await payloads(
      stack,
      token,
      `query { viewer { accounts { id
        ... @defer(label: "balance") { balance { current } }
        ... @defer(label: "transactions") { transactions(first: 3) { nodes { id } } }
      } } }`,
    );
    const arrival = (label: string): number[] => seen.filter(({ payload }) => payload.incremental?.some((part) => part.label === label)).map(({ at }) => at);
    const balances = arrival('balance');
    const transactions = arrival('transactions');
    expect(balances.length).toBeGreaterThan(0);
    expect(transactions.length).toBeGreaterThan(0);
    expect(Math.max(...balances) + 400).toBeLessThan(Math.min(...transactions));
  });
});
