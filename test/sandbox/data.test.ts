import { isValidIban } from '../../src/sandbox/fixtures/bank-details';
import type { FixtureUser, ProviderTransaction } from '../../src/sandbox/fixtures/types';
import { generateUsers } from '../../src/sandbox/fixtures/users';
import { JsonNumber, providerResultsBody, stringifyProviderJson } from '../../src/sandbox/http/respond';
import type { Sandbox } from '../../src/sandbox/sandbox';
import { bearer, getAppToken, getUserToken, refreshUserToken, type TokenResponse } from '../helpers/sandbox-auth';
import { advanceClock, request, useSandbox, type RawResponse } from '../helpers/sandbox-server';
import { startWebhookListener, verifyWebhookSignature, type WebhookListener } from '../helpers/sandbox-webhooks';

/** The text the data API writes for a results body, its pieces joined. */
const stringifyProviderResults = (results: readonly unknown[]): string => Buffer.concat(providerResultsBody(results)).toString('utf8');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function seeded(sandbox: Sandbox, username: string): FixtureUser {
  return sandbox.context.fixtures.users.find((user) => user.username === username)!;
}

/** The exact bytes the provider must send for these results. */
const wire = (results: unknown[]): string => stringifyProviderJson({ results });

/** Instant of a provider timestamp; one without an offset is UTC wall time. */
const instant = (timestamp: string): number => Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(timestamp) ? timestamp : `${timestamp}Z`);

function expectDataError(response: RawResponse, status: number, error: string): void {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/json');
  expect(response.body).toEqual({ error, error_description: expect.any(String) });
}

describe('fixtures', () => {
  const users = generateUsers({});
  const [john, jane, lee] = users as [FixtureUser, FixtureUser, FixtureUser];
  const allTransactions = (user: FixtureUser): ProviderTransaction[] =>
    [...user.accounts, ...user.cards].flatMap((item) => [...item.transactions, ...item.pendingTransactions]);

  it('seeds john, jane, lee, sam (at both banks), cara and cora (cards only), nora (nothing), ada and ben, alexsr and alexjr, minglee and leeming (joint accounts) with their logins', () => {
    expect(users.map((user) => [user.username, user.password, user.providerId, user.name, user.accounts.length, user.cards.length])).toEqual([
      ['john', 'doe', 'mock', 'John Doe', 3, 2],
      ['jane', 'doe', 'mock', 'Jane Smith', 2, 1],
      ['lee', 'doe', 'mock', 'Lee Ming-Hao', 2, 0],
      ['sam', 'doe', 'mock', 'Sam Carter', 1, 1],
      ['sam', 'doe', 'mock-north', 'Sam Carter', 2, 1],
      ['cara', 'doe', 'mock', 'Cara Jones', 0, 1],
      ['cora', 'doe', 'mock', 'Cora Jones', 0, 1],
      ['nora', 'doe', 'mock', 'Nora Blake', 0, 0],
      ['ada', 'doe', 'mock', 'Ada Green', 2, 0],
      ['ben', 'doe', 'mock', 'Ben Green', 2, 0],
      ['alexsr', 'doe', 'mock', 'Alex Green Sr', 2, 0],
      ['alexjr', 'doe', 'mock', 'Alex Green Jr', 1, 0],
      ['minglee', 'doe', 'mock', 'Ming Lee', 1, 0],
      ['leeming', 'doe', 'mock', 'Lee Ming', 2, 0],
    ]);
    // One joint account in both lists (the same id, IBAN and history), and an account of each holder's own.
    const [ada, ben] = ['ada', 'ben'].map((username) => users.find((user) => user.username === username)) as [FixtureUser, FixtureUser];
    expect(ada.accounts[1]).toBe(ben.accounts[0]);
    expect(ada.accounts[1]!.holders).toEqual(['Ada Green', 'Ben Green']);
    expect(ada.accounts[0]!.holders).toEqual(['Ada Green']);
    expect(ben.accounts[1]!.holders).toEqual(['Ben Green']);
    // Names that differ only by a suffix, or by word order: one joint account each pair, the larger login's own besides.
    for (const [smaller, larger] of [
      ['alexjr', 'alexsr'],
      ['minglee', 'leeming'],
    ]) {
      const [one, other] = [smaller, larger].map((username) => users.find((user) => user.username === username)) as [FixtureUser, FixtureUser];
      expect(one.accounts).toHaveLength(1);
      expect(other.accounts).toContain(one.accounts[0]);
      expect(one.accounts[0]!.holders).toEqual(expect.arrayContaining([one.name, other.name]));
      expect(other.accounts.filter((account) => account !== one.accounts[0]).map((account) => account.holders)).toEqual([[other.name]]);
    }
    const samNorth = users[4]!;
    expect(
      new Set([...samNorth.accounts.map(({ account }) => account.provider.provider_id), ...samNorth.cards.map(({ card }) => card.provider.provider_id)]),
    ).toEqual(new Set(['mock-north']));
    expect(john.accounts.map(({ account }) => [account.account_type, account.currency])).toEqual([
      ['TRANSACTION', 'GBP'],
      ['SAVINGS', 'GBP'],
      ['TRANSACTION', 'EUR'],
    ]);
    expect(john.cards.map(({ card }) => [card.card_network, card.card_type])).toEqual([
      ['VISA', 'CREDIT'],
      ['VISA', 'CREDIT'],
    ]);
    expect(john.accounts.map((account) => account.transactions.length)).toEqual([200, 200, 200]);
    expect(john.cards.map((card) => card.transactions.length)).toEqual([100, 100]);
    for (const item of [...john.accounts, ...john.cards]) expect(item.pendingTransactions.length).toBeGreaterThanOrEqual(2);
    expect(lee.accounts[1]!.holders).toEqual(['Lee Ming-Hao', 'Zoë Ng']);
    expect(jane.accounts.every((account) => account.holders.join() === 'Jane Smith')).toBe(true);
  });

  it('is deterministic', () => {
    expect(stringifyProviderJson(generateUsers({}))).toBe(stringifyProviderJson(users));
  });

  it('has ids unique across users and valid, consistent bank details', () => {
    // A joint account is one account in each holder's list: counted once. Only a joint account is in two lists.
    const accounts = [...new Set(users.flatMap((user) => user.accounts))];
    for (const account of accounts) {
      const holders = users.filter((user) => user.accounts.includes(account));
      expect(holders.length === 1 || account.holders.length === holders.length).toBe(true);
    }
    const cards = users.flatMap((user) => user.cards);
    const ids = [
      ...accounts.map((a) => a.account.account_id),
      ...cards.map((c) => c.card.account_id),
      ...[...accounts, ...cards].flatMap((item) => [...item.transactions, ...item.pendingTransactions]).map((t) => t.transaction_id),
    ];
    expect(new Set(ids).size).toBe(ids.length);
    const ibans = accounts.map((a) => a.account.account_number);
    expect(new Set(ibans.map((n) => n.iban)).size).toBe(ibans.length);
    for (const number of ibans) {
      expect(isValidIban(number.iban)).toBe(true);
      expect(number.sort_code).toMatch(/^\d\d-\d\d-\d\d$/);
      expect(number.iban).toBe(`${number.iban.slice(0, 4)}MOCK${number.sort_code.replace(/-/g, '')}${number.number}`);
      expect(number.swift_bic).toMatch(/^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$/);
    }
  });

  it('writes timestamps as banks do: 0, 3, 6 or 7 fractional digits, some without a UTC offset, all in 2026', () => {
    const timestamps = allTransactions(john).map((t) => t.timestamp);
    const digits = new Set(timestamps.map((t) => /\.(\d+)/.exec(t)?.[1]?.length ?? 0));
    expect([...digits].sort()).toEqual([0, 3, 6, 7]);
    expect(timestamps.some((t) => !/(Z|[+-]\d\d:\d\d)$/.test(t))).toBe(true);
    expect(timestamps.some((t) => t.endsWith('+01:00'))).toBe(true);
    for (const t of timestamps) {
      expect(t).toMatch(/^2026-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?$/);
      expect(Number.isNaN(instant(t))).toBe(false);
    }
  });

  it('keeps amounts as two-decimal numbers, with trailing zeros, negative for money out of accounts', () => {
    const account = john.accounts[0]!;
    const texts = account.transactions.map((t) => t.amount.text);
    for (const text of texts) expect(text).toMatch(/^-?\d+\.\d\d$/);
    expect(texts.some((text) => text.endsWith('0'))).toBe(true);
    for (const t of account.transactions) expect(t.transaction_type).toBe(t.amount.text.startsWith('-') ? 'DEBIT' : 'CREDIT');
    expect(texts.filter((text) => text.startsWith('-')).length).toBeGreaterThan(150);
    const withBalance = account.transactions.filter((t) => t.running_balance);
    expect(withBalance.length).toBeGreaterThan(100);
    expect(withBalance.length).toBeLessThan(200);
    expect(account.transactions[0]!.meta).toEqual({ bank_transaction_id: expect.any(String), provider_transaction_category: expect.any(String) });
  });

  it('keeps running balances consistent with the amounts and the current balance', () => {
    const account = john.accounts[0]!;
    const cents = (text: string): number => Math.round(Number(text) * 100);
    let balance = cents(account.balance.current.text);
    for (const t of account.transactions) {
      if (t.running_balance) expect(cents(t.running_balance.amount.text)).toBe(balance);
      balance -= cents(t.amount.text);
    }
  });

  it('makes card transactions positive DEBIT purchases with a masked card number and a location', () => {
    const card = john.cards[0]!;
    for (const t of card.transactions) {
      expect(t.amount.text).toMatch(/^\d+\.\d\d$/);
      expect(t.transaction_type).toBe('DEBIT');
      expect(t.meta.cardNumber).toBe(`************${card.card.partial_card_number}`);
      expect(typeof t.meta.location).toBe('string');
    }
    const withCategory = card.transactions.filter((t) => 'provider_transaction_category' in t.meta).length;
    expect(withCategory).toBeGreaterThan(0);
    expect(withCategory).toBeLessThan(card.transactions.length);
    expect(card.balance.last_statement_date).toMatch(/^\d{4}-\d\d-\d\d$/);
    expect(card.card.valid_to).toMatch(/^\d{4}-\d\d$/);
  });

  it('adds sized users user1..N without changing the named users', () => {
    const sized = generateUsers({ extraUsers: 2, accountsPerUser: 4, cardsPerUser: 2, transactionsPerAccount: 10 });
    expect(sized.map((user) => user.username)).toEqual([...users.map((user) => user.username), 'user1', 'user2']);
    expect(stringifyProviderJson(sized.slice(0, users.length))).toBe(stringifyProviderJson(users));
    const user2 = sized[users.length + 1]!;
    expect(user2.password).toBe('doe');
    expect(user2.accounts.map((a) => a.transactions.length)).toEqual([10, 10, 10, 10]);
    expect(user2.cards.map((c) => c.transactions.length)).toEqual([5, 5]);
    const ids = [...new Set(sized.flatMap((user) => user.accounts))].map((a) => a.account.account_number.iban);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('freezes every history, so the texts the data API keeps for its transactions cannot go stale', () => {
    const account = users.find((user) => user.username === 'john')!.accounts[0]!;
    expect(Object.isFrozen(account.transactions)).toBe(true);
    expect(Object.isFrozen(account.transactions[0]!.running_balance!.amount)).toBe(true);
    expect(() => (account.transactions as ProviderTransaction[]).push(account.transactions[0]!)).toThrow(TypeError);
    // Kept texts are the same text the generic serialiser writes, the second time as the first.
    for (let i = 0; i < 2; i += 1) expect(stringifyProviderResults(account.transactions)).toBe(wire(account.transactions));
    // An element that is not frozen is written as it is now, every time.
    const open = { amount: new JsonNumber('1.10') };
    expect(stringifyProviderResults([open])).toBe('{"results":[{"amount":1.10}]}');
    open.amount = new JsonNumber('2.20');
    expect(stringifyProviderResults([open])).toBe('{"results":[{"amount":2.20}]}');
    expect(stringifyProviderResults([])).toBe(wire([]));
    // A long list is cut into pieces between elements; joined, they are the same text.
    const many = Array.from({ length: 400 }, () => account.transactions).flat();
    expect(providerResultsBody(many).length).toBeGreaterThan(1);
    expect(stringifyProviderResults(many)).toBe(wire(many));
  });

  it('refuses sizes that are not small non-negative integers', () => {
    expect(() => generateUsers({ extraUsers: -1 })).toThrow('fixture size extraUsers must be an integer from 0 to 1000, got -1');
    expect(() => generateUsers({ transactionsPerAccount: 2.5 })).toThrow(RangeError);
  });
});

describe('data API, synchronous', () => {
  const sandbox = useSandbox();
  let john: TokenResponse;
  let jane: TokenResponse;
  let lee: TokenResponse;
  beforeAll(async () => {
    john = await getUserToken(sandbox(), { username: 'john', password: 'doe' });
    jane = await getUserToken(sandbox(), { username: 'jane', password: 'doe' });
    lee = await getUserToken(sandbox(), { username: 'lee', password: 'doe' });
  });
  const get = (path: string, token: TokenResponse | string = john): Promise<RawResponse> =>
    request(`${sandbox().url}${path}`, { headers: { ...bearer(token), accept: 'application/json' } });

  it('lists the accounts', async () => {
    const response = await get('/data/v1/accounts');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.text).toBe(wire(seeded(sandbox(), 'john').accounts.map((a) => a.account)));
    expect(Object.keys(response.body.results[0])).toEqual([
      'update_timestamp',
      'account_id',
      'account_type',
      'display_name',
      'currency',
      'account_number',
      'provider',
    ]);
  });

  it('answers each account balance, keeping decimal digits', async () => {
    for (const account of seeded(sandbox(), 'john').accounts) {
      const response = await get(`/data/v1/accounts/${account.account.account_id}/balance`);
      expect(response.status).toBe(200);
      expect(response.text).toBe(wire([account.balance]));
      expect(response.text).toContain(`"overdraft":${account.balance.overdraft.text}`);
    }
    expect((await get(`/data/v1/accounts/${seeded(sandbox(), 'john').accounts[0]!.account.account_id}/balance`)).text).toContain('"overdraft":1500.00');
  });

  it('answers all transactions of an account, newest first, with amounts byte for byte', async () => {
    const account = seeded(sandbox(), 'john').accounts[0]!;
    const response = await get(`/data/v1/accounts/${account.account.account_id}/transactions`);
    expect(response.status).toBe(200);
    expect(response.text).toBe(wire(account.transactions));
    expect(response.body.results).toHaveLength(200);
    const instants = response.body.results.map((t: ProviderTransaction) => instant(t.timestamp));
    expect(instants).toEqual([...instants].sort((a, b) => b - a));
    const trailingZero = account.transactions.find((t) => /\.\d0$/.test(t.amount.text))!;
    expect(response.text).toContain(`"amount":${trailingZero.amount.text},"currency"`);
    expect(response.body.results.some((t: object) => !('running_balance' in t))).toBe(true);
  });

  it('answers pending transactions of accounts and cards', async () => {
    const user = seeded(sandbox(), 'john');
    const account = await get(`/data/v1/accounts/${user.accounts[0]!.account.account_id}/transactions/pending`);
    expect(account.status).toBe(200);
    expect(account.text).toBe(wire(user.accounts[0]!.pendingTransactions));
    expect(account.body.results.length).toBeGreaterThan(0);
    const card = await get(`/data/v1/cards/${user.cards[0]!.card.account_id}/transactions/pending`);
    expect(card.text).toBe(wire(user.cards[0]!.pendingTransactions));
  });

  it('lists cards, their balances and transactions', async () => {
    const user = seeded(sandbox(), 'john');
    expect((await get('/data/v1/cards')).text).toBe(wire(user.cards.map((c) => c.card)));
    for (const card of user.cards) {
      expect((await get(`/data/v1/cards/${card.card.account_id}/balance`)).text).toBe(wire([card.balance]));
      const transactions = await get(`/data/v1/cards/${card.card.account_id}/transactions`);
      expect(transactions.text).toBe(wire(card.transactions));
      expect(transactions.body.results).toHaveLength(100);
    }
  });

  it('answers an empty card list for a user without cards', async () => {
    const response = await get('/data/v1/cards', lee);
    expect(response.status).toBe(200);
    expect(response.text).toBe('{"results":[]}');
  });

  it('filters transactions by from and to, inclusive, on the date as written', async () => {
    const account = seeded(sandbox(), 'john').accounts[2]!;
    const path = `/data/v1/accounts/${account.account.account_id}/transactions`;
    const february = await get(`${path}?from=2026-02-01&to=2026-02-28`);
    expect(february.status).toBe(200);
    const expected = account.transactions.filter((t) => t.timestamp.slice(0, 10) >= '2026-02-01' && t.timestamp.slice(0, 10) <= '2026-02-28');
    expect(expected.length).toBeGreaterThan(30);
    expect(february.text).toBe(wire(expected));

    const day = account.transactions[10]!.timestamp.slice(0, 10);
    const oneDay = await get(`${path}?from=${day}&to=${day}`);
    expect(oneDay.body.results.length).toBeGreaterThan(0);
    expect(oneDay.body.results.every((t: ProviderTransaction) => t.timestamp.startsWith(day))).toBe(true);
    expect(oneDay.body.results).toHaveLength(account.transactions.filter((t) => t.timestamp.startsWith(day)).length);

    const fromOnly = await get(`${path}?from=2026-03-15`);
    expect(fromOnly.body.results.every((t: ProviderTransaction) => t.timestamp.slice(0, 10) >= '2026-03-15')).toBe(true);
    const toOnly = await get(`${path}?to=2026-01-10`);
    expect(toOnly.body.results.every((t: ProviderTransaction) => t.timestamp.slice(0, 10) <= '2026-01-10')).toBe(true);
    expect((await get(`${path}?from=2025-01-01&to=2025-12-31`)).text).toBe('{"results":[]}');

    const card = seeded(sandbox(), 'john').cards[0]!;
    const cardFebruary = await get(`/data/v1/cards/${card.card.account_id}/transactions?from=2026-02-01&to=2026-02-28`);
    expect(cardFebruary.text).toBe(wire(card.transactions.filter((t) => t.timestamp.slice(0, 7) === '2026-02')));
  });

  it('refuses dates that are not real YYYY-MM-DD dates, and from after to', async () => {
    const path = `/data/v1/accounts/${seeded(sandbox(), 'john').accounts[0]!.account.account_id}/transactions`;
    for (const query of ['from=2026-02-30', 'to=2026-13-01', 'from=2026-2-1', 'from=yesterday', 'to=2026-01-01T00:00:00Z', 'from=2026-01-01&from=2026-01-02']) {
      expectDataError(await get(`${path}?${query}`), 400, 'invalid_request');
    }
    const range = await get(`${path}?from=2026-03-02&to=2026-03-01`);
    expectDataError(range, 400, 'invalid_date_range');
    expect(range.body.error_description).toContain('from must be on or before to');
    expectDataError(
      await get(`/data/v1/cards/${seeded(sandbox(), 'john').cards[0]!.card.account_id}/transactions/pending?to=2026-02-29`),
      400,
      'invalid_request',
    );
  });

  it("answers 404 for unknown ids, for a card id on an account route, and for another user's account", async () => {
    const johnUser = seeded(sandbox(), 'john');
    const janeAccount = seeded(sandbox(), 'jane').accounts[0]!.account.account_id;
    const janeCard = seeded(sandbox(), 'jane').cards[0]!.card.account_id;
    for (const suffix of ['balance', 'transactions', 'transactions/pending']) {
      expectDataError(await get(`/data/v1/accounts/nope/${suffix}`), 404, 'account_not_found');
      expectDataError(await get(`/data/v1/accounts/${johnUser.cards[0]!.card.account_id}/${suffix}`), 404, 'account_not_found');
      expectDataError(await get(`/data/v1/accounts/${janeAccount}/${suffix}`), 404, 'account_not_found');
      expectDataError(await get(`/data/v1/cards/nope/${suffix}`), 404, 'card_not_found');
      expectDataError(await get(`/data/v1/cards/${johnUser.accounts[0]!.account.account_id}/${suffix}`), 404, 'card_not_found');
      expectDataError(await get(`/data/v1/cards/${janeCard}/${suffix}`), 404, 'card_not_found');
    }
    expect((await get(`/data/v1/accounts/${janeAccount}/balance`, jane)).status).toBe(200);
    expectDataError(await get('/data/v1/results/00000000-0000-4000-8000-000000000000'), 404, 'task_not_found');
    expectDataError(await get('/data/v1/nothing-here'), 404, 'not_found');
  });

  it('says who signed in (GET /data/v1/info, scope info): each holder of a joint account is told apart by name', async () => {
    const info = await get('/data/v1/info', lee);
    expect(info.status).toBe(200);
    expect(info.body).toEqual({ results: [{ full_name: 'Lee Ming-Hao', update_timestamp: '2026-04-01T06:00:00Z' }] });
    for (const [username, name] of [
      ['ada', 'Ada Green'],
      ['ben', 'Ben Green'],
    ]) {
      const token = await getUserToken(sandbox(), { username: username!, password: 'doe' });
      expect((await get('/data/v1/info', token)).body.results[0].full_name).toBe(name);
    }
    const forbidden = await get('/data/v1/info', await getAppToken(sandbox()));
    expectDataError(forbidden, 403, 'insufficient_scope');
    expect(forbidden.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="info"');
  });

  it('needs a valid user token with the accounts scope', async () => {
    const none = await request(`${sandbox().url}/data/v1/accounts`);
    expectDataError(none, 401, 'invalid_token');
    expect(none.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expectDataError(await get('/data/v1/accounts', 'made-up'), 401, 'invalid_token');
    const app = await getAppToken(sandbox());
    const forbidden = await get('/data/v1/cards', app);
    expectDataError(forbidden, 403, 'insufficient_scope');
    expect(forbidden.headers.get('www-authenticate')).toContain('insufficient_scope');
    expectDataError(await get('/data/v1/results/00000000-0000-4000-8000-000000000000', app), 403, 'insufficient_scope');
  });

  it('refuses bad async parameters with 400 invalid_request', async () => {
    const cases = [
      'async=yes',
      'async=TRUE',
      'async=true',
      'async=true&webhook_uri=',
      'async=true&webhook_uri=%2Fhooks',
      'async=true&webhook_uri=ftp%3A%2F%2Fexample.com%2Fhook',
      'async=true&webhook_uri=not%20a%20url',
      'async=false&webhook_uri=http%3A%2F%2Fexample.com%2Fhook',
      'webhook_uri=http%3A%2F%2Fexample.com%2Fhook',
      'async=true&async=false&webhook_uri=http%3A%2F%2Fexample.com%2Fhook',
    ];
    for (const query of cases) {
      const response = await get(`/data/v1/accounts?${query}`);
      expectDataError(response, 400, 'invalid_request');
    }
    expect((await get('/data/v1/accounts?async=true')).body.error_description).toContain('needs webhook_uri');
    expect((await get('/data/v1/accounts?async=false')).status).toBe(200);
  });
});

describe('data API, asynchronous', () => {
  const sandbox = useSandbox({}, 'each');
  let listener: WebhookListener;
  let john: TokenResponse;
  beforeEach(async () => {
    listener = await startWebhookListener();
    john = await getUserToken(sandbox(), { username: 'john', password: 'doe' });
  });
  afterEach(async () => {
    await listener.close();
  });
  const get = (path: string, token: TokenResponse | string = john): Promise<RawResponse> =>
    request(`${sandbox().url}${path}`, { headers: { ...bearer(token), accept: 'application/json' } });
  const asyncQuery = (): string => `async=true&webhook_uri=${encodeURIComponent(listener.url)}`;

  it('queues a task, notifies the webhook with a signed payload after 1 s, then serves what the sync call answers', async () => {
    const account = seeded(sandbox(), 'john').accounts[0]!;
    const path = `/data/v1/accounts/${account.account.account_id}/transactions`;
    const ack = await get(`${path}?from=2026-03-01&to=2026-03-31&${asyncQuery()}`);
    expect(ack.status).toBe(202);
    expect(Object.keys(ack.body)).toEqual(['results_uri', 'status', 'task_id']);
    expect(ack.body.status).toBe('Queued');
    expect(ack.body.task_id).toMatch(UUID);
    expect(ack.body.results_uri).toBe(`${sandbox().url}/data/v1/results/${ack.body.task_id}`);

    const early = await request(ack.body.results_uri, { headers: bearer(john) });
    expectDataError(early, 409, 'task_not_ready');
    expect(listener.received).toHaveLength(0);

    await advanceClock(sandbox(), 1);
    const webhook = await listener.next();
    expect(webhook.method).toBe('POST');
    expect(webhook.path).toBe('/hooks');
    expect(webhook.headers['content-type']).toBe('application/json');
    expect(webhook.body).toEqual({
      request_timestamp: expect.any(String),
      request_uri: `${sandbox().url}${path}`,
      results_uri: ack.body.results_uri,
      credentials_id: expect.any(String),
      task_id: ack.body.task_id,
      status: 'succeeded',
    });
    expect(Number.isNaN(Date.parse(webhook.body.request_timestamp))).toBe(false);
    const signature = await verifyWebhookSignature(sandbox(), webhook);
    expect(signature).toMatchObject({ ok: true, jku: `${sandbox().url}/.well-known/jwks` });

    const results = await request(ack.body.results_uri, { headers: bearer(john) });
    expect(results.status).toBe(200);
    const sync = await get(`${path}?from=2026-03-01&to=2026-03-31`);
    expect(results.text).toBe(sync.text);
    expect(results.text).toBe(wire(account.transactions.filter((t) => t.timestamp >= '2026-03-01')));
    // Results stay available.
    expect((await request(ack.body.results_uri, { headers: bearer(john) })).text).toBe(sync.text);
  });

  it('works the same for every data route', async () => {
    const user = seeded(sandbox(), 'john');
    const accountId = user.accounts[1]!.account.account_id;
    const cardId = user.cards[1]!.card.account_id;
    const paths = [
      '/data/v1/accounts',
      `/data/v1/accounts/${accountId}/balance`,
      `/data/v1/accounts/${accountId}/transactions`,
      `/data/v1/accounts/${accountId}/transactions/pending`,
      '/data/v1/cards',
      `/data/v1/cards/${cardId}/balance`,
      `/data/v1/cards/${cardId}/transactions`,
      `/data/v1/cards/${cardId}/transactions/pending`,
    ];
    const acks = [];
    for (const path of paths) {
      const ack = await get(`${path}?${asyncQuery()}`);
      expect(ack.status).toBe(202);
      acks.push({ path, ack: ack.body });
    }
    await advanceClock(sandbox(), 1);
    for (let i = 0; i < paths.length; i++) await listener.next();
    const byTask = new Map(listener.received.map((webhook) => [webhook.body.task_id, webhook.body]));
    for (const { path, ack } of acks) {
      expect(byTask.get(ack.task_id)).toMatchObject({ request_uri: `${sandbox().url}${path}`, status: 'succeeded' });
      const results = await request(ack.results_uri, { headers: bearer(john) });
      expect(results.text).toBe((await get(path)).text);
    }
  });

  it('completes on its own after one second of real time at time scale 1', async () => {
    const ack = await get(`/data/v1/cards?${asyncQuery()}`);
    const webhook = await listener.next(4_000);
    expect(webhook.body.task_id).toBe(ack.body.task_id);
    expect((await request(ack.body.results_uri, { headers: bearer(john) })).status).toBe(200);
  });

  it('validates before queueing: an unknown account is 404 at once, with no task and no webhook', async () => {
    expectDataError(await get(`/data/v1/accounts/nope/transactions?${asyncQuery()}`), 404, 'account_not_found');
    expectDataError(
      await get(`/data/v1/accounts/${seeded(sandbox(), 'john').accounts[0]!.account.account_id}/transactions?from=2026-02-31&${asyncQuery()}`),
      400,
      'invalid_request',
    );
    await advanceClock(sandbox(), 5);
    expect(listener.received).toHaveLength(0);
  });

  it("keeps a task to its user: another user's token gets 404 task_not_found", async () => {
    const ack = await get(`/data/v1/accounts?${asyncQuery()}`);
    await advanceClock(sandbox(), 1);
    await listener.next();
    const jane = await getUserToken(sandbox(), { username: 'jane', password: 'doe' });
    expectDataError(await request(ack.body.results_uri, { headers: bearer(jane) }), 404, 'task_not_found');
    const app = await getAppToken(sandbox());
    expectDataError(await request(ack.body.results_uri, { headers: bearer(app) }), 403, 'insufficient_scope');
    // The same user through a refreshed token is still the owner.
    const refreshed = await refreshUserToken(sandbox(), john.refresh_token!);
    expect((await request(ack.body.results_uri, { headers: bearer(refreshed) })).status).toBe(200);
  });

  it('reports one credentials_id per consent: the same after a refresh, another for a new sign-in', async () => {
    const refreshed = await refreshUserToken(sandbox(), john.refresh_token!);
    const again = await getUserToken(sandbox(), { username: 'john', password: 'doe' });
    const taskIds: string[] = [];
    for (const token of [john, refreshed, again]) taskIds.push((await get(`/data/v1/accounts?${asyncQuery()}`, token)).body.task_id);
    await advanceClock(sandbox(), 1);
    // Deliveries travel concurrently, so they are matched to their tasks by task_id, not by arrival order.
    const webhooks = [await listener.next(), await listener.next(), await listener.next()];
    const [first, afterRefresh, newSession] = taskIds.map(
      (taskId) => webhooks.find((webhook) => webhook.body.task_id === taskId)!.body.credentials_id as string,
    );
    expect(first).toEqual(expect.any(String));
    expect(afterRefresh).toBe(first);
    expect(newSession).not.toBe(first);
  });

  it('answers what the data was when the request arrived', async () => {
    const account = seeded(sandbox(), 'john').accounts[0]!;
    const path = `/data/v1/accounts/${account.account.account_id}/balance`;
    const ack = await get(`${path}?${asyncQuery()}`);
    const before = (await get(path)).text;
    account.balance = { ...account.balance, update_timestamp: '2026-04-02T00:00:00.000Z' };
    await advanceClock(sandbox(), 1);
    await listener.next();
    expect((await request(ack.body.results_uri, { headers: bearer(john) })).text).toBe(before);
  });
});
