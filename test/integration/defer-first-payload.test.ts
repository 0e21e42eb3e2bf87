import { timedPayloads, type DeferredPayload } from '../helpers/deferred-client';
import { injectFault } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';

type Account = { id: string; balance?: unknown; transactions?: unknown };
const accountsOf = (payload: DeferredPayload): Account[] => (payload.data as { viewer: { accounts: Account[] } }).viewer.accounts;

/**
 * Only what the first payload needs is waited for: the deferred parts are their own provider calls, each arriving as
 * it finishes, not all at the end.
 */
describe('where the first payload comes from', () => {
  let stack: Stack;
  let token: string;
  const payloads = async (query: string): Promise<{ at: number; payload: DeferredPayload }[]> => {
    const { contentType, parts } = await timedPayloads(stack.gateway.url, token, query, { headers: { 'cache-control': 'no-cache' } });
    expect(contentType).toContain('multipart/mixed');
    return parts;
  };

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
      'query { viewer { accounts { id balance { current } ... @defer(label: "transactions") { transactions(first: 3) { nodes { id } } } } } }',
    );
    const [first, ...later] = seen;
    expect(first!.payload.hasNext).toBe(true);
    expect(accountsOf(first!.payload).every((account) => account.balance && account.transactions === undefined)).toBe(true);
    const parts = later.flatMap(({ payload }) => payload.incremental ?? []);
    expect(parts.map((part) => part.label)).toEqual(accountsOf(first!.payload).map(() => 'transactions'));
    expect(later.at(-1)!.at - first!.at).toBeGreaterThan(400);
  });

  it('sends each deferred part when its own calls finish: a fast one does not wait for a slow one', async () => {
    await injectFault(stack, { match: 'GET /data/v1/accounts/*/transactions', latencyMs: 800 });
    const seen = await payloads(`query { viewer { accounts { id
        ... @defer(label: "balance") { balance { current } }
        ... @defer(label: "transactions") { transactions(first: 3) { nodes { id } } }
      } } }`);
    const arrival = (label: string): number[] => seen.filter(({ payload }) => payload.incremental?.some((part) => part.label === label)).map(({ at }) => at);
    const balances = arrival('balance');
    const transactions = arrival('transactions');
    expect(balances.length).toBeGreaterThan(0);
    expect(transactions.length).toBeGreaterThan(0);
    expect(Math.max(...balances) + 400).toBeLessThan(Math.min(...transactions));
  });
});
