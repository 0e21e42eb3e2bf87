import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataOf } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

/*
 * Which fields answer NOT_FOUND and which answer null for an id the caller cannot see, as docs/api.md's error
 * table says: the table's NOT_FOUND row is read here, so the two cannot drift apart.
 */

const API_DOC = readFileSync(join(__dirname, '..', '..', 'docs', 'api.md'), 'utf8');
const NOT_FOUND_ROW = API_DOC.split('\n').find((line) => line.startsWith('| `NOT_FOUND` |'))!;
const [raising, answeringNull] = NOT_FOUND_ROW.split('Lookups answer `null` instead').map((part) =>
  [...part.matchAll(/`([\w.]+)`/g)].map((match) => match[1]!),
);

describe("NOT_FOUND and null, as docs/api.md's error table says", () => {
  let stack: Stack;
  let session: string;

  beforeAll(async () => {
    stack = await startStack();
    session = await stack.signIn('john', 'doe');
  });

  afterEach(async () => {
    await disposeWsClients();
  });

  afterAll(async () => {
    await stack?.close();
  });

  const unknown = (): string => randomUUID();

  const NULL_LOOKUPS: Record<string, () => Promise<unknown>> = {
    payout: async () =>
      dataOf(await stack.graphql<{ payout: null }>('query ($id: ID!) { payout(transactionId: $id) { transactionId } }', { id: unknown() }, session)).payout,
    payment: async () =>
      dataOf(await stack.graphql<{ payment: null }>('query ($id: ID!) { payment(id: $id) { paymentId } }', { id: unknown() }, stack.merchantKey)).payment,
    dataTask: async () => dataOf(await stack.graphql<{ dataTask: null }>('query ($id: ID!) { dataTask(id: $id) { id } }', { id: unknown() }, session)).dataTask,
    node: async () => dataOf(await stack.graphql<{ node: null }>('query ($id: ID!) { node(id: $id) { id } }', { id: 'cG86bm9uZQ' }, session)).node,
    nodes: async () =>
      dataOf(await stack.graphql<{ nodes: unknown[] }>('query ($id: ID!) { nodes(ids: [$id]) { id } }', { id: 'cG86bm9uZQ' }, session)).nodes[0],
    'viewer.account': async () =>
      dataOf(await stack.graphql<{ viewer: { account: null } }>('query ($id: ID!) { viewer { account(id: $id) { id } } }', { id: unknown() }, session)).viewer
        .account,
    'viewer.card': async () =>
      dataOf(await stack.graphql<{ viewer: { card: null } }>('query ($id: ID!) { viewer { card(id: $id) { id } } }', { id: unknown() }, session)).viewer.card,
  };

  async function codeOf(query: string, variables: Record<string, unknown>, token: string): Promise<unknown> {
    const answer = await stack.graphql(query, variables, token);
    return answer.errors?.[0]?.extensions?.code;
  }

  async function liveCode(query: string, variables: Record<string, unknown>, token: string): Promise<unknown> {
    const first = await connectWs(stack.gateway.url, token).subscribe(query, variables).next();
    return first.errors?.[0]?.extensions?.code;
  }

  const RAISING: Record<string, () => Promise<unknown>> = {
    approvePayout: () => codeOf('mutation ($id: ID!) { approvePayout(transactionId: $id) { transactionId } }', { id: unknown() }, stack.merchantKey),
    declinePayout: () =>
      codeOf('mutation ($id: ID!) { declinePayout(transactionId: $id, reason: "No") { transactionId } }', { id: unknown() }, stack.merchantKey),
    payoutUpdated: () => liveCode('subscription ($id: ID!) { payoutUpdated(transactionId: $id) { transactionId } }', { id: unknown() }, session),
    refundPayment: () =>
      codeOf(
        'mutation ($input: RefundPaymentInput!) { refundPayment(input: $input) { refundId } }',
        { input: { paymentId: unknown(), amountInMinor: 100, reference: 'Nobody' } },
        stack.merchantKey,
      ),
    refundUpdated: () => liveCode('subscription ($id: ID!) { refundUpdated(paymentId: $id) { refundId } }', { id: unknown() }, stack.merchantKey),
    dataTaskUpdated: () => liveCode('subscription ($id: ID!) { dataTaskUpdated(id: $id) { id } }', { id: unknown() }, session),
    startDataTask: () =>
      codeOf('mutation ($id: ID!) { startDataTask(input: { resource: ACCOUNT_TRANSACTIONS, id: $id }) { id } }', { id: 'no-such-account' }, session),
    verifyAccountHolder: async () => {
      // jane, once her only bank is disconnected, has no active connection to verify against.
      const jane = await stack.signIn('jane', 'doe');
      const { viewer } = dataOf(
        await stack.graphql<{ viewer: { connections: { connectionId: string }[] } }>('{ viewer { connections { connectionId } } }', {}, jane),
      );
      for (const { connectionId } of viewer.connections) {
        dataOf(await stack.graphql('mutation ($id: ID!) { disconnectBank(connectionId: $id) { connectionId } }', { id: connectionId }, jane));
      }
      return codeOf('mutation { verifyAccountHolder(name: "Jane Smith") { verified } }', {}, jane);
    },
    disconnectBank: () => codeOf('mutation ($id: ID!) { disconnectBank(connectionId: $id) { connectionId } }', { id: 'conn_nobody' }, session),
    revokeUser: () => codeOf('mutation ($id: ID!) { revokeUser(userId: $id) }', { id: 'user_nobody' }, stack.merchantKey),
    reinstateUser: () => codeOf('mutation ($id: ID!) { reinstateUser(userId: $id) }', { id: 'user_nobody' }, stack.merchantKey),
  };

  it('names in the NOT_FOUND row exactly the fields that raise it, and after it exactly the lookups that answer null', () => {
    expect(raising!.filter((name) => name !== 'NOT_FOUND' && /^[a-z]/.test(name) && !['connectionId', 'id', 'null'].includes(name)).sort()).toEqual(
      Object.keys(RAISING).sort(),
    );
    expect([...answeringNull!].sort()).toEqual(Object.keys(NULL_LOOKUPS).sort());
  });

  it.each(Object.keys(NULL_LOOKUPS))('%s answers null, without an error, for an id the caller cannot see', async (name) => {
    await expect(NULL_LOOKUPS[name]!()).resolves.toBeNull();
  });

  it.each(Object.keys(RAISING))('%s answers NOT_FOUND for what the caller cannot see', async (name) => {
    await expect(RAISING[name]!()).resolves.toBe('NOT_FOUND');
  });
});
