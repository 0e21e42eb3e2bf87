import type { Fixtures, FixtureUser } from '../../src/sandbox/fixtures/types';
import { readFixtures, userNamed } from '../helpers/fixtures';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

/*
 * Sandbox time runs at 1/1000 of real time here, so a task completes exactly when a test advances the sandbox
 * clock by its 1 s (README, "Data API"), and never on its own between two assertions.
 */

const START = `mutation Start($input: StartDataTaskInput!) {
  startDataTask(input: $input) { id: taskId resource status createdAt completedAt accounts { id: accountId } }
}`;

const TASK_FIELDS = `id: taskId resource status createdAt completedAt
  accounts { id: accountId displayName currency accountNumber { iban } }
  cards { id: cardId displayName }
  transactions { id: transactionId amount { amount currency } timestamp }
  accountBalance { currency available current }
  cardBalance { currency available creditLimit }`;

const TASK = `query Task($id: ID!) { dataTask(id: $id) { ${TASK_FIELDS} } }`;
const UPDATED = `subscription Updated($id: ID!) { dataTaskUpdated(id: $id) { ${TASK_FIELDS} } }`;

interface Task {
  id: string;
  resource: string;
  status: string;
  createdAt: string;
  completedAt: string | null;
  accounts: { id: string; displayName: string; currency: string; accountNumber: { iban: string | null } }[] | null;
  cards: { id: string; displayName: string }[] | null;
  transactions: { id: string; amount: { amount: string; currency: string }; timestamp: string }[] | null;
  accountBalance: { currency: string; available: string; current: string } | null;
  cardBalance: { currency: string; available: string; creditLimit: string | null } | null;
}

interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
}

interface Delivery {
  url: string;
  body: { task_id?: string };
  delivered: boolean;
  lastResult?: number | string;
}

describe('async data tasks', () => {
  let stack: Stack;
  let fixtures: Fixtures;
  let john: FixtureUser;
  let johnSession: string;
  let janeSession: string;

  beforeAll(async () => {
    stack = await startStack({ env: { SANDBOX_TIME_SCALE: '0.001' } });
    fixtures = await readFixtures(stack.sandbox.url);
    john = userNamed(fixtures, 'john');
    johnSession = await stack.signIn('john', 'doe');
    janeSession = await stack.signIn('jane', 'doe');
  });

  afterEach(async () => {
    await disposeWsClients();
  });

  afterAll(async () => {
    await stack?.close();
  });

  async function start(input: Record<string, unknown>, token = johnSession): Promise<Task> {
    const result = await stack.graphql<{ startDataTask: Task }>(START, { input }, token);
    expect(result.errors).toBeUndefined();
    return result.data!.startDataTask;
  }

  const completeTasks = (): Promise<unknown> => stack.sandboxJson('POST', '/sandbox/clock', { advanceSeconds: 1 });

  async function deliveryFor(taskId: string): Promise<Delivery> {
    return waitFor(async () => {
      const { deliveries } = await stack.sandboxJson<{ deliveries: Delivery[] }>('GET', '/sandbox/webhooks');
      return deliveries.find((delivery) => delivery.body.task_id === taskId && delivery.delivered);
    }, `the sandbox to deliver the webhook of task ${taskId}`);
  }

  async function providerRequests(): Promise<LoggedRequest[]> {
    return (await stack.sandboxJson<{ requests: LoggedRequest[] }>('GET', '/sandbox/requests')).requests;
  }

  const expectedAccounts = (): Task['accounts'] =>
    john.accounts.map(({ account }) => ({
      id: account.account_id,
      displayName: account.display_name,
      currency: account.currency,
      accountNumber: { iban: account.account_number.iban },
    }));

  it('pushes QUEUED, then SUCCEEDED with the accounts in the same payload, then completes', async () => {
    const task = await start({ resource: 'ACCOUNTS' });
    expect(task).toMatchObject({ resource: 'ACCOUNTS', status: 'QUEUED', completedAt: null, accounts: null });

    const live = connectWs(stack.gateway.url, johnSession).subscribe<{ dataTaskUpdated: Task }>(UPDATED, { id: task.id });
    const first = await live.next();
    expect(first.errors).toBeUndefined();
    expect(first.data!.dataTaskUpdated).toMatchObject({ id: task.id, status: 'QUEUED', accounts: null, completedAt: null });

    await completeTasks();
    const second = await live.next();
    expect(second.errors).toBeUndefined();
    const done = second.data!.dataTaskUpdated;
    expect(done).toMatchObject({ id: task.id, resource: 'ACCOUNTS', status: 'SUCCEEDED', createdAt: task.createdAt });
    expect(done.completedAt).toEqual(expect.any(String));
    expect(done.accounts).toEqual(expectedAccounts());
    expect([done.cards, done.transactions, done.accountBalance, done.cardBalance]).toEqual([null, null, null, null]);
    await expect(live.ended).resolves.toEqual({ completed: true });
    expect(live.results).toHaveLength(2);

    // The webhook_uri the provider was given carries the task's secret, not the task id.
    const [call] = (await providerRequests()).filter((request) => request.path === '/data/v1/accounts' && request.query.async === 'true');
    expect(call!.query.webhook_uri).toMatch(new RegExp(`^${stack.gateway.url}/webhooks/data/[A-Za-z0-9_-]{43}$`));
    expect(call!.query.webhook_uri).not.toContain(task.id);
  });

  it('answers dataTask as QUEUED, then SUCCEEDED, fetching the results from the provider once', async () => {
    // A range inside the seeded history (newest first), so the filter keeps some and drops some.
    const history = john.accounts[0]!.transactions;
    const to = history[10]!.timestamp.slice(0, 10);
    const from = history[history.length - 10]!.timestamp.slice(0, 10);
    const task = await start({ resource: 'ACCOUNT_TRANSACTIONS', id: john.accounts[0]!.account.account_id, from, to });
    const queued = await stack.graphql<{ dataTask: Task }>(TASK, { id: task.id }, johnSession);
    expect(queued.errors).toBeUndefined();
    expect(queued.data!.dataTask).toMatchObject({ status: 'QUEUED', transactions: null });

    await completeTasks();
    await deliveryFor(task.id);
    const seeded = history.filter((tx) => tx.timestamp.slice(0, 10) >= from && tx.timestamp.slice(0, 10) <= to);
    expect(seeded.length).toBeGreaterThan(0);
    expect(seeded.length).toBeLessThan(history.length);
    for (let read = 0; read < 3; read += 1) {
      const answer = await stack.graphql<{ dataTask: Task }>(TASK, { id: task.id }, johnSession);
      expect(answer.errors).toBeUndefined();
      expect(answer.data!.dataTask).toMatchObject({ status: 'SUCCEEDED', accounts: null, accountBalance: null });
      expect(answer.data!.dataTask.transactions!.map((tx) => tx.id)).toEqual(seeded.map((tx) => tx.transaction_id));
      expect(answer.data!.dataTask.transactions![0]!.amount).toEqual({ amount: seeded[0]!.amount, currency: seeded[0]!.currency });
    }
    const resultCalls = (await providerRequests()).filter((request) => request.path === `/data/v1/results/${task.id}`);
    expect(resultCalls).toHaveLength(1);
  });

  it('serves each resource in its own field: balances and cards', async () => {
    const accountId = john.accounts[0]!.account.account_id;
    const cardId = john.cards[0]!.card.account_id;
    const [accountBalance, cards, cardBalance] = [
      await start({ resource: 'ACCOUNT_BALANCE', id: accountId }),
      await start({ resource: 'CARDS' }),
      await start({ resource: 'CARD_BALANCE', id: cardId }),
    ];
    await completeTasks();
    await Promise.all([accountBalance, cards, cardBalance].map((task) => deliveryFor(task.id)));

    const read = async (id: string): Promise<Task> => {
      const answer = await stack.graphql<{ dataTask: Task }>(TASK, { id }, johnSession);
      expect(answer.errors).toBeUndefined();
      return answer.data!.dataTask;
    };
    const balance = john.accounts[0]!.balance;
    expect(await read(accountBalance.id)).toMatchObject({
      status: 'SUCCEEDED',
      accounts: null,
      accountBalance: { currency: balance.currency, available: balance.available, current: balance.current },
      cardBalance: null,
    });
    expect((await read(cards.id)).cards).toEqual(john.cards.map(({ card }) => ({ id: card.account_id, displayName: card.display_name })));
    const seededCard = john.cards[0]!.balance;
    expect((await read(cardBalance.id)).cardBalance).toEqual({
      currency: seededCard.currency,
      available: seededCard.available,
      creditLimit: seededCard.credit_limit,
    });
  });

  it('gives a subscriber who arrives after the webhook the finished task first, then completes', async () => {
    const task = await start({ resource: 'ACCOUNTS' });
    await completeTasks();
    await deliveryFor(task.id);

    const live = connectWs(stack.gateway.url, johnSession).subscribe<{ dataTaskUpdated: Task }>(UPDATED, { id: task.id });
    const first = await live.next();
    expect(first.errors).toBeUndefined();
    expect(first.data!.dataTaskUpdated).toMatchObject({ status: 'SUCCEEDED', accounts: expectedAccounts() });
    await expect(live.ended).resolves.toEqual({ completed: true });
    expect(live.results).toHaveLength(1);
  });

  it('checks the input before any provider call', async () => {
    await stack.sandboxJson('DELETE', '/sandbox/requests');
    const cases: [Record<string, unknown>, string][] = [
      [{ resource: 'ACCOUNTS', id: 'acc-1' }, 'input.id'],
      [{ resource: 'ACCOUNT_BALANCE' }, 'input.id'],
      [{ resource: 'CARD_TRANSACTIONS', id: 'card-1', from: '2024-05-02', to: '2024-05-01' }, 'input.from'],
      [{ resource: 'CARDS', from: '2024-05-01' }, 'input.from'],
      [{ resource: 'ACCOUNT_BALANCE', id: 'has a space' }, 'input.id'],
    ];
    for (const [input, field] of cases) {
      const result = await stack.graphql(START, { input }, johnSession);
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
    }
    const dated = await stack.graphql(START, { input: { resource: 'ACCOUNT_TRANSACTIONS', id: 'x', from: '2024-02-30' } }, johnSession);
    expect(dated.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await providerRequests()).filter((request) => request.path.startsWith('/data/'))).toEqual([]);
  });

  it('answers NOT_FOUND for an account the user does not have, and stores no task', async () => {
    const result = await stack.graphql(START, { input: { resource: 'ACCOUNT_BALANCE', id: 'no-such-account' } }, johnSession);
    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('shows a task only to the user who started it', async () => {
    const task = await start({ resource: 'ACCOUNTS' });
    const asJane = await stack.graphql<{ dataTask: Task | null }>(TASK, { id: task.id }, janeSession);
    expect(asJane.errors).toBeUndefined();
    expect(asJane.data!.dataTask).toBeNull();

    const janeLive = connectWs(stack.gateway.url, janeSession).subscribe(UPDATED, { id: task.id });
    const refused = await janeLive.next();
    expect(refused.data ?? null).toBeNull();
    expect(refused.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    await janeLive.ended;

    const asMerchant = await stack.graphql(TASK, { id: task.id }, stack.merchantKey);
    expect(asMerchant.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const merchantStart = await stack.graphql(START, { input: { resource: 'ACCOUNTS' } }, stack.merchantKey);
    expect(merchantStart.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const anonymous = await stack.graphql(START, { input: { resource: 'ACCOUNTS' } });
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');

    const anonymousLive = connectWs(stack.gateway.url).subscribe(UPDATED, { id: task.id });
    expect((await anonymousLive.next()).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const badTokenLive = connectWs(stack.gateway.url, 'not-a-session-token-at-all').subscribe(UPDATED, { id: task.id });
    expect((await badTokenLive.next()).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');

    const malformed = await stack.graphql(TASK, { id: 'not-a-uuid' }, johnSession);
    expect(malformed.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'id' });
  });

  it('validates subscriptions like HTTP operations: unknown fields and bad variables are BAD_USER_INPUT', async () => {
    const ws = connectWs(stack.gateway.url, johnSession);
    const unknownField = ws.subscribe(`subscription { dataTaskUpdated(id: "x") { nope } }`);
    expect((await unknownField.next()).errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'GRAPHQL_VALIDATION_FAILED' });
    const syntax = ws.subscribe(`subscription { dataTaskUpdated(id: `);
    expect((await syntax.next()).errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'GRAPHQL_PARSE_FAILED' });
    const badVariable = ws.subscribe(UPDATED, { id: { nested: true } });
    expect((await badVariable.next()).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('still answers a finished task after a restart between the webhook and the query', async () => {
    const task = await start({ resource: 'ACCOUNTS' });
    await completeTasks();
    await deliveryFor(task.id);
    await stack.restartGateway();

    const answer = await stack.graphql<{ dataTask: Task }>(TASK, { id: task.id }, johnSession);
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.dataTask).toMatchObject({ id: task.id, status: 'SUCCEEDED', accounts: expectedAccounts() });
    const live = connectWs(stack.gateway.url, johnSession).subscribe<{ dataTaskUpdated: Task }>(UPDATED, { id: task.id });
    expect((await live.next()).data!.dataTaskUpdated).toMatchObject({ status: 'SUCCEEDED', accounts: expectedAccounts() });
  });
});
