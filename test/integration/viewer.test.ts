import type { Fixtures, FixtureUser, ProviderTransaction } from '../../src/sandbox/fixtures/types';
import { AccountTransactionsPageDocument, AccountTwiceDocument, BalancesDocument, PendingDocument, ViewerGraphDocument } from '../generated/graphql';
import { print } from 'graphql';
import { readFixtures, userNamed } from '../helpers/fixtures';
import { startStack, type Stack } from '../helpers/stack';

interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
}

describe('the query graph over the data API', () => {
  let stack: Stack;
  let fixtures: Fixtures;
  let john: FixtureUser;
  let johnSession: string;

  beforeAll(async () => {
    stack = await startStack();
    fixtures = await readFixtures(stack.sandbox.url);
    john = userNamed(fixtures, 'john');
    johnSession = await stack.signIn('john', 'doe');
  });

  afterAll(async () => {
    await stack?.close();
  });

  async function providerRequests(): Promise<LoggedRequest[]> {
    const { requests } = await stack.sandboxJson<{ requests: LoggedRequest[] }>('GET', '/sandbox/requests');
    return requests;
  }

  async function clearProviderRequests(): Promise<void> {
    await stack.sandboxJson('DELETE', '/sandbox/requests');
  }

  const dataCalls = (requests: LoggedRequest[]): LoggedRequest[] => requests.filter((request) => request.path.startsWith('/data/'));

  it('answers the nested graph field by field as the sandbox holds it, in one round trip', async () => {
    const result = await stack.graphql(ViewerGraphDocument, { first: 100 }, johnSession, { 'cache-control': 'no-cache' });
    expect(result.errors).toBeUndefined();
    const viewer = result.data!.viewer;

    expect(viewer.accounts).toHaveLength(john.accounts.length);
    viewer.accounts.forEach((account, index) => {
      const seeded = john.accounts[index]!;
      expect(account).toMatchObject({
        accountId: seeded.account.account_id,
        type: seeded.account.account_type,
        displayName: seeded.account.display_name,
        currency: seeded.account.currency,
        accountNumber: {
          iban: seeded.account.account_number.iban,
          number: seeded.account.account_number.number,
          sortCode: seeded.account.account_number.sort_code,
          swiftBic: seeded.account.account_number.swift_bic,
        },
        provider: { id: seeded.account.provider.provider_id },
        updatedAt: seeded.account.update_timestamp,
        balance: {
          currency: seeded.balance.currency,
          available: seeded.balance.available,
          current: seeded.balance.current,
          overdraft: seeded.balance.overdraft,
          updatedAt: seeded.balance.update_timestamp,
        },
      });
      expect(account.transactions.totalCount).toBe(seeded.transactions.length);
      expect(account.transactions.nodes).toEqual(seeded.transactions.slice(0, 100).map(expectedTransaction));
    });

    expect(viewer.cards).toHaveLength(john.cards.length);
    viewer.cards.forEach((card, index) => {
      const seeded = john.cards[index]!;
      expect(card).toMatchObject({
        cardId: seeded.card.account_id,
        network: seeded.card.card_network,
        type: seeded.card.card_type,
        currency: seeded.card.currency,
        displayName: seeded.card.display_name,
        partialCardNumber: seeded.card.partial_card_number,
        nameOnCard: seeded.card.name_on_card,
        validFrom: seeded.card.valid_from,
        validTo: seeded.card.valid_to,
        updatedAt: seeded.card.update_timestamp,
        balance: {
          currency: seeded.balance.currency,
          available: seeded.balance.available,
          current: seeded.balance.current,
          creditLimit: seeded.balance.credit_limit,
          lastStatementBalance: seeded.balance.last_statement_balance,
          lastStatementDate: seeded.balance.last_statement_date,
          paymentDue: seeded.balance.payment_due,
          paymentDueDate: seeded.balance.payment_due_date,
        },
      });
      expect(card.transactions.totalCount).toBe(seeded.transactions.length);
      expect(card.transactions.nodes.map((node) => node.amount.amount)).toEqual(seeded.transactions.slice(0, 100).map((t) => t.amount));
    });
  });

  it('keeps timestamps and decimal digits exactly as the provider sent them', async () => {
    const all = john.accounts.flatMap((account) => account.transactions);
    // The fixtures deliberately vary these; the test is only meaningful if they do.
    expect(new Set(all.map((t) => (/\.(\d+)/.exec(t.timestamp)?.[1] ?? '').length)).size).toBeGreaterThan(1);
    expect(all.some((t) => !/(Z|[+-]\d\d:\d\d)$/.test(t.timestamp))).toBe(true);
    expect(all.some((t) => /\.\d0$/.test(String(t.amount)))).toBe(true);

    const result = await stack.graphql(ViewerGraphDocument, { first: 100 }, johnSession);
    const served = result.data!.viewer.accounts.flatMap((account) => account.transactions.nodes);
    const seeded = new Map(all.map((t) => [t.transaction_id, t]));
    for (const node of served) {
      expect(node.timestamp).toBe(seeded.get(node.transactionId)!.timestamp);
      expect(node.amount.amount).toBe(String(seeded.get(node.transactionId)!.amount));
    }
  });

  it('costs exactly 2 + 2A + 2C provider calls cold, in parallel, and none again within the cache TTL', async () => {
    const session = await stack.signIn('john', 'doe');
    await clearProviderRequests();
    const cold = await stack.graphql(ViewerGraphDocument, { first: 10 }, session, { 'cache-control': 'no-cache' });
    expect(cold.errors).toBeUndefined();
    const calls = dataCalls(await providerRequests());
    expect(calls).toHaveLength(2 + 2 * john.accounts.length + 2 * john.cards.length);
    expect(new Set(calls.map((call) => `${call.path}?${new URLSearchParams(call.query).toString()}`)).size).toBe(calls.length);

    await clearProviderRequests();
    const warm = await stack.graphql(ViewerGraphDocument, { first: 10 }, session);
    expect(warm.data).toEqual(cold.data);
    expect(dataCalls(await providerRequests())).toHaveLength(0);
  });

  it('fetches the same account once however often one operation asks for it', async () => {
    await clearProviderRequests();
    const accountId = john.accounts[0]!.account.account_id;
    const result = await stack.graphql(AccountTwiceDocument, { id: accountId }, johnSession, { 'cache-control': 'no-cache' });
    expect(result.errors).toBeUndefined();
    expect(result.data!.viewer.first).toEqual(result.data!.viewer.second);
    expect(dataCalls(await providerRequests())).toHaveLength(1 + john.accounts.length);
  });

  it('pages through transactions with stable cursors', async () => {
    const seeded = john.accounts[0]!;
    const id = seeded.account.account_id;
    const first = await stack.graphql(AccountTransactionsPageDocument, { id, first: 10 }, johnSession);
    const page1 = first.data!.viewer.account!.transactions;
    expect(page1.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(page1.edges.map((edge) => edge.node.transactionId)).toEqual(seeded.transactions.slice(0, 10).map((t) => t.transaction_id));

    const second = await stack.graphql(AccountTransactionsPageDocument, { id, first: 10, after: page1.pageInfo.endCursor }, johnSession);
    const page2 = second.data!.viewer.account!.transactions;
    expect(page2.pageInfo.hasPreviousPage).toBe(true);
    expect(page2.edges.map((edge) => edge.node.transactionId)).toEqual(seeded.transactions.slice(10, 20).map((t) => t.transaction_id));
  });

  it('filters transactions by an inclusive date range', async () => {
    const seeded = john.accounts[0]!;
    const day = seeded.transactions[5]!.timestamp.slice(0, 10);
    const result = await stack.graphql(AccountTransactionsPageDocument, { id: seeded.account.account_id, first: 100, from: day, to: day }, johnSession);
    const ids = result.data!.viewer.account!.transactions.edges.map((edge) => edge.node.transactionId);
    const expected = seeded.transactions.filter((t) => t.timestamp.slice(0, 10) === day).map((t) => t.transaction_id);
    expect(expected.length).toBeGreaterThan(0);
    expect(ids).toEqual(expected);
  });

  it('serves pending transactions', async () => {
    const result = await stack.graphql(PendingDocument, {}, johnSession);
    expect(result.errors).toBeUndefined();
    expect(result.data!.viewer.accounts.map((account) => account.pendingTransactions.map((t) => t.transactionId))).toEqual(
      john.accounts.map((account) => account.pendingTransactions.map((t) => t.transaction_id)),
    );
  });

  it('never shows one user the data of another, through the cache or otherwise', async () => {
    const jane = userNamed(fixtures, 'jane');
    const janeSession = await stack.signIn('jane', 'doe');
    const [johnView, janeView] = await Promise.all([stack.graphql(BalancesDocument, {}, johnSession), stack.graphql(BalancesDocument, {}, janeSession)]);
    expect(johnView.data!.viewer.accounts.map((account) => account.accountId)).toEqual(john.accounts.map((a) => a.account.account_id));
    expect(janeView.data!.viewer.accounts.map((account) => account.accountId)).toEqual(jane.accounts.map((a) => a.account.account_id));
    const janeAgain = await stack.graphql(AccountTwiceDocument, { id: john.accounts[0]!.account.account_id }, janeSession);
    expect(janeAgain.data!.viewer.first).toBeNull();
  });

  describe('the answer cache', () => {
    afterEach(async () => {
      await stack.sandboxJson('DELETE', '/sandbox/faults');
    });

    it('never serves one user the answer another user got for the same request', async () => {
      const jane = userNamed(fixtures, 'jane');
      const janeSession = await stack.signIn('jane', 'doe');
      await stack.graphql(BalancesDocument, {}, johnSession);
      const johnAgain = await stack.graphql(BalancesDocument, {}, johnSession);
      const janeView = await stack.graphql(BalancesDocument, {}, janeSession);
      expect(johnAgain.data!.viewer.accounts.map((account) => account.accountId)).toEqual(john.accounts.map((a) => a.account.account_id));
      expect(janeView.data!.viewer.accounts.map((account) => account.accountId)).toEqual(jane.accounts.map((a) => a.account.account_id));
    });

    it('serves a kept answer byte for byte as the first, with its length', async () => {
      const session = await stack.signIn('john', 'doe');
      const body = JSON.stringify({ query: print(ViewerGraphDocument), variables: { first: 20 } });
      const post = async (): Promise<{ bytes: Buffer; length: string | null; chunked: string | null }> => {
        const response = await fetch(`${stack.gateway.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${session}` },
          body,
        });
        return {
          bytes: Buffer.from(await response.arrayBuffer()),
          length: response.headers.get('content-length'),
          chunked: response.headers.get('transfer-encoding'),
        };
      };
      const executed = await post();
      const kept = await post();
      expect(JSON.parse(executed.bytes.toString('utf8')).errors).toBeUndefined();
      expect(kept.bytes.equals(executed.bytes)).toBe(true);
      for (const answer of [executed, kept]) {
        expect(answer.length).toBe(String(answer.bytes.length));
        expect(answer.chunked).toBeNull();
      }
    });

    it('does not keep an answer that carried an error', async () => {
      const session = await stack.signIn('lee', 'doe');
      const failing = userNamed(fixtures, 'lee').accounts[0]!.account.account_id;
      await stack.sandboxJson('POST', '/sandbox/faults', { match: `GET /data/v1/accounts/${failing}/balance`, status: 503 });
      const broken = await stack.graphql(BalancesDocument, {}, session);
      expect(broken.errors).toHaveLength(1);
      await stack.sandboxJson('DELETE', '/sandbox/faults');
      const mended = await stack.graphql(BalancesDocument, {}, session);
      expect(mended.errors).toBeUndefined();
      expect(mended.data!.viewer.accounts[0]!.balance).not.toBeNull();
    });
  });

  describe('bad input', () => {
    it('refuses an anonymous viewer with UNAUTHENTICATED', async () => {
      const result = await stack.graphql(BalancesDocument, {});
      expect(result.data).toBeNull();
      expect(result.errors![0]!.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
      expect(result.errors![0]!.message).toMatch(/sign in/i);
    });

    it('refuses an unknown session token with UNAUTHENTICATED', async () => {
      const result = await stack.graphql(BalancesDocument, {}, 'not-a-session-token');
      expect(result.errors![0]!.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
    });

    it.each([
      ['a month that does not exist', { from: '2026-13-01' }, /YYYY-MM-DD/],
      ['a day that does not exist', { to: '2026-02-30' }, /YYYY-MM-DD/],
      ['a range that ends before it starts', { from: '2026-03-01', to: '2026-02-01' }, /from must not be after to/],
      ['a page larger than the cap', { first: 1000 }, /first must be an integer from 0 to 100; got 1000/],
      ['a cursor that is not one', { after: 'garbage!' }, /not a valid cursor/],
    ])('refuses %s with BAD_USER_INPUT saying what is accepted, before calling the provider', async (_what, variables, message) => {
      await clearProviderRequests();
      const result = await stack.graphql(AccountTransactionsPageDocument, { id: john.accounts[0]!.account.account_id, ...variables }, johnSession, {
        'cache-control': 'no-cache',
      });
      expect(result.errors).toHaveLength(1);
      expect(result.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
      expect(result.errors![0]!.message).toMatch(message);
      expect(dataCalls(await providerRequests()).filter((call) => call.path.endsWith('/transactions'))).toHaveLength(0);
    });

    it('refuses a well-formed cursor that belongs to no transaction of the list', async () => {
      const after = Buffer.from('tx:no-such-transaction').toString('base64url');
      const result = await stack.graphql(AccountTransactionsPageDocument, { id: john.accounts[0]!.account.account_id, after }, johnSession);
      expect(result.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'after' });
      expect(result.errors![0]!.message).toMatch(/not a cursor of this list/);
    });
  });

  describe('provider faults', () => {
    afterEach(async () => {
      await stack.sandboxJson('DELETE', '/sandbox/faults');
    });

    it('retries a GET that failed with 503 or 429 and answers as if nothing happened', async () => {
      await stack.sandboxJson('POST', '/sandbox/faults', { match: 'GET /data/v1/accounts', status: 503, times: 1 });
      await stack.sandboxJson('POST', '/sandbox/faults', { match: 'GET /data/v1/accounts/*/balance', status: 429, retryAfter: 0, times: 2 });
      const result = await stack.graphql(BalancesDocument, {}, johnSession, { 'cache-control': 'no-cache' });
      expect(result.errors).toBeUndefined();
      expect(result.data!.viewer.accounts.map((account) => account.balance!.current)).toEqual(john.accounts.map((a) => String(a.balance.current)));
    });

    it('gives null and one UPSTREAM_UNAVAILABLE error for a balance that keeps failing, and keeps the rest', async () => {
      const failing = john.accounts[1]!.account.account_id;
      await stack.sandboxJson('POST', '/sandbox/faults', { match: `GET /data/v1/accounts/${failing}/balance`, status: 503 });
      const result = await stack.graphql(BalancesDocument, {}, johnSession, { 'cache-control': 'no-cache' });
      expect(result.errors).toHaveLength(1);
      expect(result.errors![0]!).toMatchObject({ path: ['viewer', 'accounts', 1, 'balance'], extensions: { code: 'UPSTREAM_UNAVAILABLE' } });
      expect(result.errors![0]!.extensions!.requestId).toEqual(expect.any(String));
      const accounts = result.data!.viewer.accounts;
      expect(accounts[1]!.balance).toBeNull();
      expect(accounts[0]!.balance!.current).toBe(String(john.accounts[0]!.balance.current));
      expect(accounts.map((account) => account.displayName)).toEqual(john.accounts.map((a) => a.account.display_name));
    });

    it('refreshes an expired provider token transparently', async () => {
      const session = await stack.signIn('john', 'doe');
      await stack.sandboxJson('POST', '/sandbox/clock', { advanceSeconds: 3_700 });
      await clearProviderRequests();
      const result = await stack.graphql(BalancesDocument, {}, session, { 'cache-control': 'no-cache' });
      expect(result.errors).toBeUndefined();
      const requests = await providerRequests();
      expect(requests.filter((request) => request.path === '/connect/token')).toHaveLength(1);
      expect(result.data!.viewer.accounts).toHaveLength(john.accounts.length);
    });
  });

  describe('sessions', () => {
    it('survive a gateway restart and end at logout', async () => {
      const session = await stack.signIn('jane', 'doe');
      await stack.restartGateway();
      const after = await stack.graphql(BalancesDocument, {}, session);
      expect(after.errors).toBeUndefined();

      const logout = await fetch(`${stack.gateway.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${session}` } });
      expect(logout.status).toBe(204);
      const refused = await stack.graphql(BalancesDocument, {}, session);
      expect(refused.errors![0]!.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
    });
  });
});

function expectedTransaction(t: ProviderTransaction): Record<string, unknown> {
  const meta = t.meta as Record<string, unknown>;
  return {
    id: expect.any(String),
    transactionId: t.transaction_id,
    normalisedProviderTransactionId: t.normalised_provider_transaction_id,
    providerTransactionId: t.provider_transaction_id,
    timestamp: t.timestamp,
    description: t.description,
    amount: { amount: String(t.amount), currency: t.currency },
    type: t.transaction_type,
    category: t.transaction_category,
    classification: t.transaction_classification,
    merchantName: t.merchant_name,
    runningBalance: t.running_balance ? { amount: String(t.running_balance.amount), currency: t.running_balance.currency } : null,
    meta: {
      bankTransactionId: meta.bank_transaction_id ?? null,
      providerTransactionCategory: meta.provider_transaction_category ?? null,
      cardNumber: meta.cardNumber ?? null,
      location: meta.location ?? null,
      raw: meta,
    },
  };
}
