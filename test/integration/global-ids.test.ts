import { toGlobalId } from '../../src/platform/graphql/node/global-id';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import {
  CREATE_PAYOUT,
  dataOf,
  fixtures,
  ibanOf,
  onlyError,
  paymentsIn,
  providerRequests,
  REFUND_PAYMENT,
  user,
  VERIFY,
  type LoggedRequest,
} from '../helpers/money';
import { randomUUID } from 'node:crypto';
import { startStack, type GraphQLResult, type Stack } from '../helpers/stack';

/** Every object of john's that has an identity, as his own fields show it. */
const JOHNS_GRAPH = /* GraphQL */ `
  query JohnsGraph {
    viewer {
      id
      userId
      connections {
        id
        connectionId
      }
      accounts {
        id
        accountId
        transactions(first: 2) {
          nodes {
            id
            transactionId
          }
        }
        pendingTransactions {
          id
          transactionId
        }
      }
      cards {
        id
        cardId
        transactions(first: 1) {
          nodes {
            id
            transactionId
          }
        }
      }
      payouts {
        id
        transactionId
      }
      verifiedBeneficiaries {
        id
        iban
      }
    }
  }
`;

/** What node(id:) shows of each type: enough to tell which object came back. */
const NODE_FIELDS = `
  __typename
  id
  ... on Viewer { userId }
  ... on BankConnection { connectionId }
  ... on Account { accountId }
  ... on Card { cardId }
  ... on Transaction { transactionId }
  ... on Payout { transactionId }
  ... on DataTask { taskId }
  ... on VerifiedBeneficiary { iban }
  ... on Payment { paymentId }
  ... on Refund { refundId paymentId }
`;
const NODES = `query Nodes($ids: [ID!]!) { nodes(ids: $ids) { ${NODE_FIELDS} } }`;
const NODE = `query Node($id: ID!) { node(id: $id) { ${NODE_FIELDS} } }`;

interface Johns {
  viewer: {
    id: string;
    userId: string;
    connections: { id: string; connectionId: string }[];
    accounts: {
      id: string;
      accountId: string;
      transactions: { nodes: { id: string; transactionId: string }[] };
      pendingTransactions: { id: string; transactionId: string }[];
    }[];
    cards: { id: string; cardId: string; transactions: { nodes: { id: string; transactionId: string }[] } }[];
    payouts: { id: string; transactionId: string }[];
    verifiedBeneficiaries: { id: string; iban: string }[];
  };
}
type NodeView = Record<string, unknown> & { __typename: string; id: string };

const dataCalls = (requests: LoggedRequest[]): string[] => requests.filter((request) => request.path.startsWith('/data/')).map((r) => `${r.method} ${r.path}`);

describe('global object identification', () => {
  let stack: Stack;
  let seeded: Fixtures;
  let john: string;
  let jane: string;
  let johns: Johns['viewer'];
  let task: { id: string; taskId: string };
  let payment: { id: string; paymentId: string; refunds: { id: string; refundId: string }[] };
  /** Every id of john's objects, with what its own field showed of it. */
  let expected: { id: string; typename: string; fields: Record<string, unknown> }[];

  beforeAll(async () => {
    stack = await startStack();
    seeded = await fixtures(stack);
    john = await stack.signIn('john', 'doe');
    jane = await stack.signIn('jane', 'doe');
    dataOf(await stack.graphql(VERIFY, { name: 'John Doe' }, john));
    const payoutInput = {
      beneficiaryName: 'John Doe',
      beneficiaryIban: ibanOf(user(seeded, 'john')),
      beneficiaryReference: 'Node test',
      amountInMinor: 321,
      currency: 'GBP',
    };
    dataOf(await stack.graphql(CREATE_PAYOUT, { input: payoutInput }, john));
    task = dataOf(
      await stack.graphql<{ startDataTask: { id: string; taskId: string } }>(
        'mutation { startDataTask(input: { resource: ACCOUNTS }) { id taskId } }',
        {},
        john,
      ),
    ).startDataTask;
    const settled = paymentsIn(seeded, 'settled')[0]!.id;
    dataOf(await stack.graphql(REFUND_PAYMENT, { input: { paymentId: settled, amountInMinor: 1, reference: 'Node test' } }, stack.merchantKey));
    payment = dataOf(
      await stack.graphql<{ payment: typeof payment }>(
        'query P($id: ID!) { payment(id: $id) { id paymentId refunds { id refundId } } }',
        { id: settled },
        stack.merchantKey,
      ),
    ).payment;
    johns = dataOf(await stack.graphql<Johns>(JOHNS_GRAPH, {}, john)).viewer;
    expected = [
      { id: johns.id, typename: 'Viewer', fields: { userId: johns.userId } },
      ...johns.connections.map((item) => ({ id: item.id, typename: 'BankConnection', fields: { connectionId: item.connectionId } })),
      ...johns.accounts.map((item) => ({ id: item.id, typename: 'Account', fields: { accountId: item.accountId } })),
      ...johns.cards.map((item) => ({ id: item.id, typename: 'Card', fields: { cardId: item.cardId } })),
      ...[
        ...johns.accounts.flatMap((item) => [...item.transactions.nodes, ...item.pendingTransactions]),
        ...johns.cards.flatMap((item) => item.transactions.nodes),
      ].map((item) => ({ id: item.id, typename: 'Transaction', fields: { transactionId: item.transactionId } })),
      ...johns.payouts.map((item) => ({ id: item.id, typename: 'Payout', fields: { transactionId: item.transactionId } })),
      { id: task.id, typename: 'DataTask', fields: { taskId: task.taskId } },
      ...johns.verifiedBeneficiaries.map((item) => ({ id: item.id, typename: 'VerifiedBeneficiary', fields: { iban: item.iban } })),
    ];
  });

  afterAll(async () => {
    await stack?.close();
  });

  async function dataCallsOf(run: () => Promise<unknown>): Promise<string[]> {
    await stack.sandboxJson('DELETE', '/sandbox/requests');
    await run();
    return dataCalls(await providerRequests(stack)).sort();
  }

  it('gives every object of every type an id unique across all of them', () => {
    const typenames = new Set(expected.map((item) => item.typename));
    expect([...typenames].sort()).toEqual(['Account', 'BankConnection', 'Card', 'DataTask', 'Payout', 'Transaction', 'VerifiedBeneficiary', 'Viewer']);
    expect(johns.cards.length).toBeGreaterThan(0);
    expect(johns.accounts.some((account) => account.pendingTransactions.length > 0)).toBe(true);
    const ids = [...expected.map((item) => item.id), payment.id, ...payment.refunds.map((refund) => refund.id)];
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('answers node(id:) and nodes(ids:) with each of the owner’s objects, in order', async () => {
    const answer = dataOf(await stack.graphql<{ nodes: NodeView[] }>(NODES, { ids: expected.map((item) => item.id) }, john));
    expect(answer.nodes).toEqual(expected.map((item) => expect.objectContaining({ __typename: item.typename, id: item.id, ...item.fields })));
    for (const item of expected.filter((_, index) => index % 3 === 0)) {
      const one = dataOf(await stack.graphql<{ node: NodeView }>(NODE, { id: item.id }, john));
      expect(one.node).toEqual(expect.objectContaining({ __typename: item.typename, id: item.id, ...item.fields }));
    }
  });

  it('answers payments and refunds to a merchant key, as payment(id:) does', async () => {
    const ids = [payment.id, ...payment.refunds.map((refund) => refund.id)];
    const answer = dataOf(await stack.graphql<{ nodes: NodeView[] }>(NODES, { ids }, stack.merchantKey));
    expect(answer.nodes).toEqual([
      expect.objectContaining({ __typename: 'Payment', id: payment.id, paymentId: payment.paymentId }),
      ...payment.refunds.map((refund) =>
        expect.objectContaining({ __typename: 'Refund', id: refund.id, refundId: refund.refundId, paymentId: payment.paymentId }),
      ),
    ]);
  });

  it('answers another user’s ids exactly as ids that do not exist or are malformed: null, no error, no provider call', async () => {
    const johnsIds = expected.map((item) => item.id);
    const asJane: GraphQLResult<unknown>[] = [];
    const calls = await dataCallsOf(async () => {
      asJane.push(await stack.graphql(NODES, { ids: johnsIds }, jane, { 'cache-control': 'no-cache' }));
      for (const id of johnsIds) asJane.push(await stack.graphql(NODE, { id }, jane, { 'cache-control': 'no-cache' }));
    });
    // Jane's own accounts may be read for her account ids (her own field would read them), never john's resources.
    expect(calls.filter((call) => johns.accounts.some((account) => call.includes(account.accountId)))).toEqual([]);
    const malformed = [
      'garbage',
      '',
      'a'.repeat(600),
      Buffer.from('1:a').toString('base64url'),
      Buffer.from('1:zz:x').toString('base64url'),
      Buffer.from('2:a:x').toString('base64url'),
      Buffer.from('1:t:a:only-two').toString('base64url'),
      Buffer.from('1:a:no-such-account').toString('base64url'),
      Buffer.from('1:po:8a3f1c52-0a56-4f43-9f0e-1f4a8d2c9e11').toString('base64url'),
      Buffer.from('1:dt:8a3f1c52-0a56-4f43-9f0e-1f4a8d2c9e11').toString('base64url'),
    ];
    const unknown = await stack.graphql(NODES, { ids: johnsIds.map((_, index) => malformed[index % malformed.length]!) }, jane);
    expect(asJane[0]).toEqual({ status: 200, data: { nodes: johnsIds.map(() => null) } });
    expect(unknown).toEqual({ status: 200, data: { nodes: johnsIds.map(() => null) } });
    for (const one of asJane.slice(1)) expect(one).toEqual({ status: 200, data: { node: null } });
    for (const id of malformed) expect(await stack.graphql(NODE, { id }, jane)).toEqual({ status: 200, data: { node: null } });
    // A merchant key reads no user's graph through its own fields, so none through node either.
    expect((await stack.graphql(NODES, { ids: johnsIds.filter((id) => !johns.payouts.some((payout) => payout.id === id)) }, stack.merchantKey)).data).toEqual({
      nodes: johnsIds.filter((id) => !johns.payouts.some((payout) => payout.id === id)).map(() => null),
    });
    // And payments and refunds are a merchant's only.
    const merchantOnly = [payment.id, ...payment.refunds.map((refund) => refund.id)];
    expect(await stack.graphql(NODES, { ids: merchantOnly }, john)).toEqual({ status: 200, data: { nodes: merchantOnly.map(() => null) } });
  });

  it('asks the provider for no more than the type’s own field would', async () => {
    const account = johns.accounts.find((item) => item.pendingTransactions.length > 0)!;
    const noCache = { 'cache-control': 'no-cache' };
    const ownField = await dataCallsOf(() =>
      stack.graphql(
        'query O($id: ID!) { viewer { account(id: $id) { accountId transactions { nodes { id } } pendingTransactions { id } } } }',
        { id: account.accountId },
        john,
        noCache,
      ),
    );
    const ids = [account.id, account.transactions.nodes[0]!.id, account.transactions.nodes[1]!.id, account.pendingTransactions[0]!.id];
    const throughNodes = await dataCallsOf(async () => dataOf(await stack.graphql(NODES, { ids }, john, noCache)));
    expect(throughNodes).toEqual(ownField);
    // Every account in one batch: one accounts list per bank, as viewer.accounts reads.
    const accountsField = await dataCallsOf(() => stack.graphql('{ viewer { accounts { id } } }', {}, john, noCache));
    const allAccounts = await dataCallsOf(async () => dataOf(await stack.graphql(NODES, { ids: johns.accounts.map((item) => item.id) }, john, noCache)));
    expect(allAccounts).toEqual(accountsField);
    expect(allAccounts.length).toBe(johns.connections.length);
  });

  it('still takes the provider’s ids wherever it took them, and the global ids beside them', async () => {
    const account = johns.accounts[0]!;
    const card = johns.cards[0]!;
    const payout = johns.payouts[0]!;
    const viewerQuery = 'query V($a: ID!, $c: ID!) { viewer { account(id: $a) { id accountId } card(id: $c) { id cardId } } }';
    const byProviderId = dataOf(await stack.graphql(viewerQuery, { a: account.accountId, c: card.cardId }, john));
    const byGlobalId = dataOf(await stack.graphql(viewerQuery, { a: account.id, c: card.id }, john));
    expect(byProviderId).toEqual({ viewer: { account: { id: account.id, accountId: account.accountId }, card: { id: card.id, cardId: card.cardId } } });
    expect(byGlobalId).toEqual(byProviderId);
    // Another type's global id names no account.
    expect(dataOf(await stack.graphql(viewerQuery, { a: card.id, c: account.id }, john))).toEqual({ viewer: { account: null, card: null } });

    const payoutQuery = 'query P($id: ID!) { payout(transactionId: $id) { id transactionId } }';
    for (const id of [payout.transactionId, payout.id]) expect(dataOf(await stack.graphql(payoutQuery, { id }, john))).toEqual({ payout });
    const taskQuery = 'query T($id: ID!) { dataTask(id: $id) { id taskId } }';
    for (const id of [task.taskId, task.id]) expect(dataOf(await stack.graphql(taskQuery, { id }, john))).toEqual({ dataTask: task });
    const paymentQuery = 'query P($id: ID!) { payment(id: $id) { id paymentId } }';
    for (const id of [payment.paymentId, payment.id]) {
      expect(dataOf(await stack.graphql(paymentQuery, { id }, stack.merchantKey))).toEqual({ payment: { id: payment.id, paymentId: payment.paymentId } });
    }
    // An argument that needs a payout's id says what it takes when given something else.
    const refused = onlyError(await stack.graphql(payoutQuery, { id: account.id }, john));
    expect(refused.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'transactionId' });
    const reinstate = 'mutation R($id: ID!) { reinstateUser(userId: $id) }';
    const unknownUser = Buffer.from('1:u:user_unknown').toString('base64url');
    expect(onlyError(await stack.graphql(reinstate, { id: unknownUser }, stack.merchantKey)).extensions!.code).toBe('NOT_FOUND');
  });

  it('caps nodes(ids:) and counts every id in the operation’s cost', async () => {
    const tooMany = Array.from({ length: 101 }, () => johns.id);
    const refused = onlyError(await stack.graphql(NODES, { ids: tooMany }, john));
    expect(refused.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'ids' });
    expect(refused.message).toMatch(/at most 100 ids; got 101/);
    // 100 ids of accounts with 100 transactions of 2 objects each weigh about 100 × 200, past the cost limit
    // (20000), and are refused before anything runs; counted as a list of 10, they would have passed.
    const heavy = `query H($ids: [ID!]!) { nodes(ids: $ids) { ... on Account { transactions(first: 100) { nodes { id amount { amount } runningBalance { amount } } } } } }`;
    const ids = Array.from({ length: 100 }, () => johns.accounts[0]!.id);
    let costly: GraphQLResult<unknown> | undefined;
    const calls = await dataCallsOf(async () => (costly = await stack.graphql(heavy, { ids }, john)));
    expect(costly!.data ?? null).toBeNull();
    expect(costly!.errors?.map((error) => error.extensions)).toEqual([expect.objectContaining({ code: 'BAD_USER_INPUT', reason: 'OPERATION_LIMIT' })]);
    expect(calls).toEqual([]);
    // The same selection for a few ids is cheap enough.
    const few = await stack.graphql<{ nodes: unknown[] }>(heavy, { ids: ids.slice(0, 2) }, john);
    expect(few.errors).toBeUndefined();
    expect(few.data!.nodes).toHaveLength(2);
  });

  it('prices every id and caps the ids of one operation across aliases, node and nodes, before any provider call', async () => {
    const paymentIds = seeded.payments.map((item) => toGlobalId('pm', item.id));
    // 17 aliases of 100 merchant-key ids each, payments and payouts mixed, selecting only `id`.
    const ids = Array.from({ length: 100 }, (_, index) => (index % 2 === 0 ? paymentIds[index % paymentIds.length]! : toGlobalId('po', randomUUID())));
    const aliases = Array.from({ length: 17 }, (_, index) => `n${index}: nodes(ids: $ids) { id }`).join(' ');
    let flood: GraphQLResult<unknown> | undefined;
    const requests = async (run: () => Promise<unknown>): Promise<LoggedRequest[]> => {
      await stack.sandboxJson('DELETE', '/sandbox/requests');
      await run();
      return (await providerRequests(stack)).filter((request) => /^\/v(1\/withdrawals|3\/payments)/.test(request.path));
    };
    expect(await requests(async () => (flood = await stack.graphql(`query F($ids: [ID!]!) { ${aliases} }`, { ids }, stack.merchantKey)))).toEqual([]);
    expect(flood!.data ?? null).toBeNull();
    const refused = onlyError(flood!);
    expect(refused.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'OPERATION_LIMIT', limit: 'maxNodeIds', max: 100 });
    expect(refused.message).toMatch(/at most 100 ids .*got 1700/);
    // node and nodes count together: a full list and one more node(id:) is past the cap too.
    const mixed = onlyError(
      await stack.graphql('query M($ids: [ID!]!, $one: ID!) { node(id: $one) { id } nodes(ids: $ids) { id } }', { ids, one: ids[0] }, stack.merchantKey),
    );
    expect(mixed.extensions).toMatchObject({ limit: 'maxNodeIds', max: 100 });
    expect(mixed.message).toMatch(/got 101/);

    // At the cap, a payout id the gateway never recorded is not looked up at the provider: only the payments are read,
    // once each, as payment(id:) would read them.
    const payoutIds = ids.filter((_, index) => index % 2 === 1);
    let answered: GraphQLResult<{ nodes: ({ id: string } | null)[] }> | undefined;
    const calls = await requests(async () => (answered = await stack.graphql(NODES, { ids }, stack.merchantKey, { 'cache-control': 'no-cache' })));
    expect(answered!.errors).toBeUndefined();
    expect(answered!.data!.nodes.filter((node, index) => index % 2 === 1 && node !== null)).toEqual([]);
    expect(calls.filter((call) => call.path.startsWith('/v1/withdrawals'))).toEqual([]);
    const distinctPayments = new Set(ids.filter((_, index) => index % 2 === 0));
    expect(calls.length).toBeLessThanOrEqual(distinctPayments.size);
    expect(payoutIds).toHaveLength(50);
  });

  it('wants a principal, as every other root field', async () => {
    expect(onlyError(await stack.graphql(NODE, { id: johns.id })).extensions!.code).toBe('UNAUTHENTICATED');
  });
});
