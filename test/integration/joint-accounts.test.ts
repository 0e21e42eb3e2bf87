import { randomUUID } from 'node:crypto';
import type { FixtureUser } from '../../src/sandbox/fixtures/types';
import { CREATE_PAYOUT, dataOf, fixtures, onlyError, user, VERIFY, type PayoutView } from '../helpers/money';
import { createPostgresSchema, type PostgresSchema } from '../helpers/postgres';
import { answerBankPage, startSignIn } from '../helpers/sign-in-steps';
import { startStack, type Stack } from '../helpers/stack';

/**
 * Two people who share a joint account (the sandbox's ada and ben: the joint account and an account of each one's
 * own) are two users in bank identity, whoever signs in first, on either store (docs/identity.md, "Who a grant
 * belongs to").
 */

const VIEWER = /* GraphQL */ `
  query Viewer {
    viewer {
      id
      accounts {
        id
        accountId
      }
      connections {
        id
        status
      }
      verifiedBeneficiaries {
        iban
      }
      payouts {
        transactionId
        beneficiaryIban
      }
    }
  }
`;
const START_TASK = 'mutation { startDataTask(input: { resource: ACCOUNTS }) { id } }';
const READ_TASK = 'query ($id: ID!) { dataTask(id: $id) { id } }';
const REVOKE = 'mutation ($id: ID!) { revokeUser(userId: $id) }';
const REINSTATE = 'mutation ($id: ID!) { reinstateUser(userId: $id) }';

interface ViewerView {
  viewer: {
    id: string;
    accounts: { id: string; accountId: string }[];
    connections: { id: string; status: string }[];
    verifiedBeneficiaries: { iban: string }[];
    payouts: { transactionId: string; beneficiaryIban: string }[];
  };
}

const STORES = ['SQLite', 'PostgreSQL'] as const;

async function startOn(store: (typeof STORES)[number]): Promise<{ stack: Stack; schema?: PostgresSchema }> {
  if (store === 'SQLite') return { stack: await startStack() };
  const schema = await createPostgresSchema('joint_accounts');
  try {
    return { stack: await startStack({ env: { STORE_URL: schema.url } }), schema };
  } catch (error) {
    await schema.drop();
    throw error;
  }
}

const accountIds = (person: FixtureUser): string[] => person.accounts.map(({ account }) => account.account_id).sort();
const ibans = (person: FixtureUser): string[] => person.accounts.map(({ account }) => account.account_number.iban).sort();

describe.each(STORES)('joint accounts in bank identity (%s)', (store) => {
  describe.each([
    ['ada', 'ben'],
    ['ben', 'ada'],
  ])('%s signs in first, then %s', (firstLogin, secondLogin) => {
    let stack: Stack;
    let schema: PostgresSchema | undefined;
    let first: FixtureUser;
    let second: FixtureUser;

    beforeAll(async () => {
      ({ stack, schema } = await startOn(store));
      const seeded = await fixtures(stack);
      first = user(seeded, firstLogin);
      second = user(seeded, secondLogin);
    });

    afterAll(async () => {
      await stack?.close();
      await schema?.drop();
    });

    const viewerOf = async (session: string): Promise<ViewerView['viewer']> =>
      dataOf(await stack.graphql<ViewerView>(VIEWER, {}, session, { 'cache-control': 'no-cache' })).viewer;
    const ownIban = (person: FixtureUser): string => person.accounts.find(({ holders }) => holders.length === 1)!.account.account_number.iban;
    const payTo = (person: FixtureUser, iban: string): Record<string, unknown> => ({
      transactionId: randomUUID(),
      beneficiaryName: person.name,
      beneficiaryIban: iban,
      beneficiaryReference: 'Joint test',
      amountInMinor: 1_000,
      currency: 'GBP',
    });

    it("makes two users: each sees the joint account and only their own accounts, beneficiaries, payouts and tasks; neither's connection is revoked", async () => {
      const firstSession = await stack.signIn(firstLogin, 'doe');
      expect(dataOf(await stack.graphql(VERIFY, { name: first.name }, firstSession))).toBeDefined();
      const paid = dataOf(await stack.graphql<{ createPayout: PayoutView }>(CREATE_PAYOUT, { input: payTo(first, ownIban(first)) }, firstSession));
      expect(paid.createPayout.status).toBe('authorised');
      const task = dataOf(await stack.graphql<{ startDataTask: { id: string } }>(START_TASK, {}, firstSession)).startDataTask;

      const secondSession = await stack.signIn(secondLogin, 'doe');
      const one = await viewerOf(firstSession);
      const two = await viewerOf(secondSession);
      expect(two.id).not.toBe(one.id);
      expect(one.accounts.map((account) => account.accountId).sort()).toEqual(accountIds(first));
      expect(two.accounts.map((account) => account.accountId).sort()).toEqual(accountIds(second));
      expect(one.connections.map((connection) => connection.status)).toEqual(['ACTIVE']);
      expect(two.connections.map((connection) => connection.status)).toEqual(['ACTIVE']);
      expect(one.verifiedBeneficiaries.map((beneficiary) => beneficiary.iban).sort()).toEqual(ibans(first));
      expect(two.verifiedBeneficiaries).toEqual([]);
      expect(one.payouts.map((payout) => payout.transactionId)).toEqual([paid.createPayout.transactionId]);
      expect(two.payouts).toEqual([]);
      expect(dataOf(await stack.graphql<{ dataTask: unknown }>(READ_TASK, { id: task.id }, secondSession)).dataTask).toBeNull();

      // The second holder's own verification gives them their accounts, the joint one included, and not the first's own.
      dataOf(await stack.graphql(VERIFY, { name: second.name }, secondSession));
      expect((await viewerOf(secondSession)).verifiedBeneficiaries.map((beneficiary) => beneficiary.iban).sort()).toEqual(ibans(second));
      expect(onlyError(await stack.graphql(CREATE_PAYOUT, { input: payTo(first, ownIban(first)) }, secondSession)).extensions!.code).toBe(
        'BENEFICIARY_NOT_VERIFIED',
      );
      expect((await viewerOf(firstSession)).verifiedBeneficiaries.map((beneficiary) => beneficiary.iban).sort()).toEqual(ibans(first));
    });

    it('keeps each holder their user when they sign in again, also with an account opened since', async () => {
      const before = [await viewerOf(await stack.signIn(firstLogin, 'doe')), await viewerOf(await stack.signIn(secondLogin, 'doe'))];
      expect(before[1]!.id).not.toBe(before[0]!.id);
      const opened = await stack.sandboxJson<{ account_id: string }>('POST', `/sandbox/users/${secondLogin}/accounts`, { displayName: 'New Account' });
      const secondAgain = await stack.signIn(secondLogin, 'doe');
      const after = await viewerOf(secondAgain);
      expect(after.id).toBe(before[1]!.id);
      expect(after.accounts.map((account) => account.accountId)).toContain(opened.account_id);
      expect(after.connections.map((connection) => connection.status)).toEqual(['ACTIVE']);
      const firstAgain = await viewerOf(await stack.signIn(firstLogin, 'doe'));
      expect(firstAgain.id).toBe(before[0]!.id);
      expect(firstAgain.accounts.map((account) => account.accountId)).not.toContain(opened.account_id);
      expect(firstAgain.connections.map((connection) => connection.status)).toEqual(['ACTIVE']);
    });

    it('does not add the other holder\'s login to a user signed in on the same browser ("add a bank")', async () => {
      const firstSession = await stack.signIn(firstLogin, 'doe');
      await expect(stack.signIn(secondLogin, 'doe', { sessionToken: firstSession })).rejects.toThrow(/HTTP 403: This bank login belongs to another user/);
      const one = await viewerOf(firstSession);
      expect(one.accounts.map((account) => account.accountId).sort()).toEqual(accountIds(first));
      expect(one.connections.map((connection) => connection.status)).toEqual(['ACTIVE']);
    });

    it("refuses a revoked holder's login until reinstateUser, while the other holder still signs in", async () => {
      const firstUser = (await viewerOf(await stack.signIn(firstLogin, 'doe'))).id;
      const secondUser = (await viewerOf(await stack.signIn(secondLogin, 'doe'))).id;
      expect(dataOf(await stack.graphql(REVOKE, { id: firstUser }, stack.merchantKey))).toEqual({ revokeUser: true });

      await expect(stack.signIn(firstLogin, 'doe')).rejects.toThrow(/HTTP 403: This bank login belongs to a user whose access has been revoked/);
      // A browser gets the same reason on a page, and no session cookie.
      const started = await startSignIn(stack.gateway.url, '?returnTo=/graphql');
      const callback = await answerBankPage(started.bankPage!, { username: firstLogin, password: 'doe' });
      const page = await fetch(callback, { headers: { cookie: started.loginCookie!, accept: 'text/html' }, redirect: 'manual' });
      expect(page.status).toBe(403);
      expect(await page.text()).toContain('This bank login belongs to a user whose access has been revoked');
      expect(page.headers.getSetCookie().some((cookie) => cookie.startsWith('bankgraph_session=') && !cookie.includes('Max-Age=0'))).toBe(false);
      const second = await viewerOf(await stack.signIn(secondLogin, 'doe'));
      expect(second.id).toBe(secondUser);
      expect(second.accounts.map((account) => account.accountId).sort()).toEqual(accountIds(user(await fixtures(stack), secondLogin)));

      const asUser = await stack.graphql(REINSTATE, { id: firstUser }, await stack.signIn(secondLogin, 'doe'));
      expect(onlyError(asUser).extensions!.code).toBe('FORBIDDEN');
      expect(onlyError(await stack.graphql(REINSTATE, { id: 'user_unknown' }, stack.merchantKey)).extensions!.code).toBe('NOT_FOUND');
      expect(dataOf(await stack.graphql(REINSTATE, { id: firstUser }, stack.merchantKey))).toEqual({ reinstateUser: true });
      const back = await viewerOf(await stack.signIn(firstLogin, 'doe'));
      expect(back.id).toBe(firstUser);
      expect(back.accounts.map((account) => account.accountId).sort()).toEqual(accountIds(first));
      expect(back.connections.map((connection) => connection.status)).toEqual(['ACTIVE']);
    });
  });
});

describe.each(STORES)('names the bank spells differently are different people (%s)', (store) => {
  let stack: Stack;
  let schema: PostgresSchema | undefined;

  beforeAll(async () => {
    ({ stack, schema } = await startOn(store));
  });

  afterAll(async () => {
    await stack?.close();
    await schema?.drop();
  });

  const viewerOf = async (session: string): Promise<ViewerView['viewer']> =>
    dataOf(await stack.graphql<ViewerView>(VIEWER, {}, session, { 'cache-control': 'no-cache' })).viewer;

  it.each([
    ['alexjr', 'alexsr', 'a generational suffix (Alex Green Jr, Alex Green Sr)'],
    ['minglee', 'leeming', 'word order (Ming Lee, Lee Ming)'],
  ])("keeps %s and %s two users, told apart by %s: neither sees the other's own account, neither's connection is replaced", async (sonLogin, fatherLogin) => {
    const seeded = await fixtures(stack);
    const [son, father] = [user(seeded, sonLogin), user(seeded, fatherLogin)];
    // The holder of only the joint account signs in first; the other's grant shows that account and one of their own.
    const sonSession = await stack.signIn(sonLogin, 'doe');
    const sonUser = (await viewerOf(sonSession)).id;
    const fatherSession = await stack.signIn(fatherLogin, 'doe');
    const [one, two] = [await viewerOf(sonSession), await viewerOf(fatherSession)];
    expect(two.id).not.toBe(one.id);
    expect(one.id).toBe(sonUser);
    expect(one.accounts.map((account) => account.accountId).sort()).toEqual(accountIds(son));
    expect(two.accounts.map((account) => account.accountId).sort()).toEqual(accountIds(father));
    expect(one.connections.map((connection) => connection.status)).toEqual(['ACTIVE']);
    expect(two.connections.map((connection) => connection.status)).toEqual(['ACTIVE']);
    // Each signs in again to their own user, and the father's login is refused on the son's browser.
    expect((await viewerOf(await stack.signIn(sonLogin, 'doe'))).id).toBe(one.id);
    expect((await viewerOf(await stack.signIn(fatherLogin, 'doe'))).id).toBe(two.id);
    await expect(stack.signIn(fatherLogin, 'doe', { sessionToken: sonSession })).rejects.toThrow(/HTTP 403: This bank login belongs to another user/);
    expect((await viewerOf(sonSession)).accounts.map((account) => account.accountId).sort()).toEqual(accountIds(son));
  });
});
