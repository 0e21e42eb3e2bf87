import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { loadConfig, withProvider } from '../../src/platform/config/config';
import { pointSandboxWebhooksAt, startEmbeddedSandbox } from '../../src/embedded-sandbox';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import type { Sandbox } from '../../src/sandbox/sandbox';
import { createGateway, type Gateway } from '../../src/app/gateway';
import { startTestIdp, type TestIdp } from '../helpers/jwks-server';
import {
  APPROVE_PAYOUT,
  CREATE_PAYOUT,
  dataOf,
  DECLINE_PAYOUT,
  ibanOf,
  onlyError,
  PAYOUT_UPDATED,
  QUIET_RECONCILER,
  READ_PAYOUT,
  user,
  VERIFY,
  type LedgerEntry,
  type LoggedRequest,
  type PayoutView,
} from '../helpers/money';
import { createPostgresSchema } from '../helpers/postgres';
import { answerBankPage } from '../helpers/sign-in-steps';
import { graphqlAt, MERCHANT_KEY, sandboxJsonAt, startStack, type GraphQLResult, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

/*
 * The payout policy across users (docs/money.md): one bank account attached to several app users (app identity:
 * each app user connects the same bank login), the cap per beneficiary IBAN they share, approval on a user's
 * rolling total, and approvals re-checked when they are given. The gateway's payout clock is stepped, never waited on.
 */

const AUDIENCE = 'bankgraph-api';
const HOUR_MS = 60 * 60 * 1000;

type CreateResult = { createPayout: PayoutView };

interface AppUser {
  token: string;
  userId: string;
}

function appIdentityEnv(idp: TestIdp): Record<string, string> {
  return { AUTH_JWKS_URL: idp.jwksUrl, AUTH_ISSUER: idp.issuer, AUTH_AUDIENCE: AUDIENCE, AUTH_ALGORITHMS: 'ES256' };
}

/** A new app user (its own subject) who connected john's bank login on `gatewayUrl` and verified John Doe's IBAN there. */
async function appUserOnJohnsBank(idp: TestIdp, gatewayUrl: string): Promise<AppUser> {
  const now = Math.floor(Date.now() / 1000);
  const token = idp.sign({ iss: idp.issuer, aud: AUDIENCE, sub: `app-user-${randomUUID()}`, iat: now, exp: now + 3_600 });
  const started = await fetch(`${gatewayUrl}/auth/connections`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  expect(started.status).toBe(200);
  const { authorizationUrl, loginBinding } = (await started.json()) as { authorizationUrl: string; loginBinding: string };
  const callback = await answerBankPage(authorizationUrl, { username: 'john', password: 'doe' });
  expect((await fetch(callback, { headers: { accept: 'application/json', 'login-binding': loginBinding } })).status).toBe(200);
  dataOf(await graphqlAt(gatewayUrl, VERIFY, { name: 'John Doe' }, token));
  const userId = dataOf(await graphqlAt<{ viewer: { id: string } }>(gatewayUrl, '{ viewer { id } }', {}, token)).viewer.id;
  return { token, userId };
}

function payoutInput(iban: string, amountInMinor: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  // Each its own reference: identical payouts without transactionId would answer the first.
  return {
    beneficiaryName: 'John Doe',
    beneficiaryIban: iban,
    beneficiaryReference: `Limits ${randomUUID().slice(0, 8)}`,
    amountInMinor,
    currency: 'GBP',
    ...overrides,
  };
}

type Backend = { name: string; open(): Promise<{ env: Record<string, string>; cleanUp(): Promise<void> }> };

const BACKENDS: Backend[] = [
  { name: 'SQLite', open: async () => ({ env: {}, cleanUp: async () => undefined }) },
  {
    name: 'PostgreSQL',
    async open() {
      const schema = await createPostgresSchema('payout_limits');
      return { env: { STORE_URL: schema.url }, cleanUp: () => schema.drop() };
    },
  },
];

describe.each(BACKENDS)('payout limits across users on $name', (backend) => {
  let idp: TestIdp;
  let stack: Stack;
  let cleanUp: (() => Promise<void>) | undefined;
  let iban: string;
  let clock = Date.now();

  beforeAll(async () => {
    idp = await startTestIdp();
    const opened = await backend.open();
    cleanUp = opened.cleanUp;
    // A user's daily cap below the IBAN's, so each of the two refuses on its own.
    stack = await startStack({
      env: { ...appIdentityEnv(idp), ...QUIET_RECONCILER, PAYOUT_DAILY_MAX_MINOR: '300000', ...opened.env },
      gateway: { clock: () => clock },
    });
    iban = ibanOf(user(await stack.sandboxJson<Fixtures>('GET', '/sandbox/fixtures'), 'john'));
  });

  beforeEach(() => {
    // Every test starts where the payouts of the ones before have left the 24-hour windows.
    clock += 25 * HOUR_MS;
  });

  afterEach(async () => {
    await disposeWsClients();
  });

  afterAll(async () => {
    try {
      await stack?.close();
      await cleanUp?.();
    } finally {
      await idp?.close();
    }
  });

  function pay(who: AppUser | string, amountInMinor: number, overrides: Record<string, unknown> = {}): Promise<GraphQLResult<CreateResult>> {
    return stack.graphql<CreateResult>(CREATE_PAYOUT, { input: payoutInput(iban, amountInMinor, overrides) }, typeof who === 'string' ? who : who.token);
  }

  async function withdrawalPosts(): Promise<number> {
    const { requests } = await stack.sandboxJson<{ requests: LoggedRequest[] }>('GET', '/sandbox/requests');
    return requests.filter((request) => request.method === 'POST' && request.path === '/v1/withdrawals').length;
  }

  it('stops two app users connected to one bank from draining its IBAN past PAYOUT_BENEFICIARY_DAILY_MAX_MINOR, naming each limit', async () => {
    const first = await appUserOnJohnsBank(idp, stack.gateway.url);
    const second = await appUserOnJohnsBank(idp, stack.gateway.url);
    expect(first.userId).not.toBe(second.userId);

    const tooLarge = onlyError(await pay(first, 100_001));
    expect(tooLarge.extensions).toMatchObject({ code: 'PAYOUT_LIMIT_EXCEEDED', limit: 'per-payout', remainingInMinor: 100_000 });
    expect(tooLarge.message).toMatch(/100001.*100000/);

    for (let paid = 0; paid < 300_000; paid += 50_000) dataOf(await pay(first, 50_000));
    const userDaily = onlyError(await pay(first, 50_000));
    expect(userDaily.extensions).toMatchObject({ code: 'PAYOUT_LIMIT_EXCEEDED', limit: 'user-daily', remainingInMinor: 0 });
    expect(userDaily.message).toMatch(/50000.*0 of 300000/);

    // The second user has 300 000 of their own left, but the IBAN only 200 000 of its 500 000.
    for (let paid = 0; paid < 200_000; paid += 50_000) dataOf(await pay(second, 50_000));
    const before = await withdrawalPosts();
    const drained = onlyError(await pay(second, 50_000));
    expect(drained.extensions).toMatchObject({ code: 'PAYOUT_LIMIT_EXCEEDED', limit: 'beneficiary-daily', remainingInMinor: 0 });
    expect(drained.message).toContain(`IBAN ${iban}`);
    expect(drained.message).toMatch(/50000.*0 of 500000/);
    // A merchant key's own payout is neither refused by the IBAN's cap nor counted in it.
    expect(dataOf(await pay(MERCHANT_KEY, 10_000)).createPayout.status).toBe('authorised');
    expect(onlyError(await pay(second, 1)).extensions).toMatchObject({ limit: 'beneficiary-daily', remainingInMinor: 0 });
    expect(await withdrawalPosts()).toBe(before + 1);

    // A rolling window: a day later the IBAN takes payouts again.
    clock += 24 * HOUR_MS;
    expect(dataOf(await pay(second, 50_000)).createPayout.status).toBe('authorised');
  });

  it('asks for approval once an app user’s rolling 24 h total, this payout included, passes PAYOUT_APPROVAL_ABOVE_MINOR', async () => {
    const someone = await appUserOnJohnsBank(idp, stack.gateway.url);
    expect(dataOf(await pay(someone, 30_000)).createPayout.status).toBe('authorised');
    expect(dataOf(await pay(someone, 20_000)).createPayout.status).toBe('authorised');
    const before = await withdrawalPosts();
    // 50 001 in 24 hours: above the threshold of 50 000, though this payout alone is 1.
    expect(dataOf(await pay(someone, 1)).createPayout.status).toBe('awaiting-approval');
    expect(await withdrawalPosts()).toBe(before);
  });

  it('refuses to approve the payout of a user revoked since it was requested, and sends nothing', async () => {
    const someone = await appUserOnJohnsBank(idp, stack.gateway.url);
    const waiting = dataOf(await pay(someone, 60_000)).createPayout;
    expect(waiting.status).toBe('awaiting-approval');
    expect(dataOf(await stack.graphql('mutation ($id: ID!) { revokeUser(userId: $id) }', { id: someone.userId }, MERCHANT_KEY))).toEqual({ revokeUser: true });

    const before = await withdrawalPosts();
    const refused = onlyError(await stack.graphql(APPROVE_PAYOUT, { id: waiting.transactionId }, MERCHANT_KEY));
    expect(refused.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'PAYOUT_OWNER_REVOKED' });
    expect(refused.message).toContain('revoked');
    expect(await withdrawalPosts()).toBe(before);
    expect(dataOf(await stack.graphql<{ payout: PayoutView }>(READ_PAYOUT, { id: waiting.transactionId }, MERCHANT_KEY)).payout.status).toBe(
      'awaiting-approval',
    );
    expect(
      dataOf(await stack.graphql<{ declinePayout: { status: string } }>(DECLINE_PAYOUT, { id: waiting.transactionId, reason: 'User revoked' }, MERCHANT_KEY)),
    ).toEqual({
      declinePayout: { transactionId: waiting.transactionId, status: 'declined' },
    });
  });

  it('refuses to approve a payout that no longer fits a limit, keeps it waiting, and approves it once it fits', async () => {
    const someone = await appUserOnJohnsBank(idp, stack.gateway.url);
    const waiting = dataOf(await pay(someone, 60_000)).createPayout;
    expect(waiting.status).toBe('awaiting-approval');
    // A day later it has left the window, and two other users have paid the IBAN its 500 000 since.
    clock += 25 * HOUR_MS;
    const others = [await appUserOnJohnsBank(idp, stack.gateway.url), await appUserOnJohnsBank(idp, stack.gateway.url)];
    const since: PayoutView[] = [];
    for (const [other, total] of [
      [others[0]!, 300_000],
      [others[1]!, 200_000],
    ] as const) {
      for (let paid = 0; paid < total; paid += 50_000) since.push(dataOf(await pay(other, 50_000)).createPayout);
    }

    const before = await withdrawalPosts();
    const refused = onlyError(await stack.graphql(APPROVE_PAYOUT, { id: waiting.transactionId }, MERCHANT_KEY));
    expect(refused.extensions).toMatchObject({ code: 'PAYOUT_LIMIT_EXCEEDED', limit: 'beneficiary-daily', remainingInMinor: 0 });
    expect(refused.message).toContain(waiting.transactionId);
    expect(await withdrawalPosts()).toBe(before);
    expect(dataOf(await stack.graphql<{ payout: PayoutView }>(READ_PAYOUT, { id: waiting.transactionId }, MERCHANT_KEY)).payout.status).toBe(
      'awaiting-approval',
    );

    // Two of the later payouts declined free 100 000: the 60 000 fits again.
    for (const payout of since.filter((candidate) => candidate.status === 'awaiting-approval').slice(0, 2)) {
      dataOf(await stack.graphql(DECLINE_PAYOUT, { id: payout.transactionId, reason: 'Too many' }, MERCHANT_KEY));
    }
    const approved = dataOf(
      await stack.graphql<{ approvePayout: { status: string } }>(APPROVE_PAYOUT, { id: waiting.transactionId }, MERCHANT_KEY),
    ).approvePayout;
    expect(approved.status).toBe('authorised');
    expect(await withdrawalPosts()).toBe(before + 1);
  });

  it('expires a payout left awaiting approval past PAYOUT_APPROVAL_EXPIRY_MS, by the reconciler, and pushes expired to its subscribers', async () => {
    const someone = await appUserOnJohnsBank(idp, stack.gateway.url);
    const waiting = dataOf(await pay(someone, 60_000)).createPayout;
    const live = connectWs(stack.gateway.url, someone.token).subscribe<{ payoutUpdated: { status: string } }>(PAYOUT_UPDATED, { id: waiting.transactionId });
    expect((await live.next()).data?.payoutUpdated.status).toBe('awaiting-approval');
    const expiredBefore = await expiredRepairs();

    clock += 72 * HOUR_MS - 1;
    await stack.gateway.scheduler.runOnce();
    expect((await stack.gateway.features.payouts.ledger.get(waiting.transactionId))?.status).toBe('awaiting-approval');

    clock += 1;
    await stack.gateway.scheduler.runOnce();
    expect((await stack.gateway.features.payouts.ledger.get(waiting.transactionId))?.status).toBe('expired');
    const pushed = await waitFor(
      () => live.results.map((result) => result.data?.payoutUpdated.status).find((status) => status === 'expired'),
      'the expiry pushed',
    );
    expect(pushed).toBe('expired');
    expect(await expiredRepairs()).toBeGreaterThan(expiredBefore);

    const before = await withdrawalPosts();
    const late = onlyError(await stack.graphql(APPROVE_PAYOUT, { id: waiting.transactionId }, MERCHANT_KEY));
    expect(late.extensions?.code).toBe('BAD_USER_INPUT');
    expect(late.message).toContain('expired');
    expect(await withdrawalPosts()).toBe(before);
    expect(dataOf(await stack.graphql<{ payout: PayoutView }>(READ_PAYOUT, { id: waiting.transactionId }, someone.token)).payout.status).toBe('expired');
  });

  async function expiredRepairs(): Promise<number> {
    const metrics = await (await fetch(`${stack.gateway.url}/metrics`)).text();
    return Number(/bankgraph_reconciler_repairs_total\{kind="payout_approval_expired"\} (\d+)/.exec(metrics)?.[1] ?? 0);
  }
});

describe('the cap per IBAN under a parallel rush on two gateway instances sharing PostgreSQL', () => {
  let idp: TestIdp;
  let sandbox: Sandbox;
  let a: Gateway;
  let b: Gateway;
  let dropSchema: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    idp = await startTestIdp();
    const schema = await createPostgresSchema('payout_limits_rush');
    dropSchema = () => schema.drop();
    const base = loadConfig({
      NODE_ENV: 'test',
      PORT: '0',
      SANDBOX_PORT: '0',
      STORE_URL: schema.url,
      MERCHANT_KEYS: MERCHANT_KEY,
      HTTP_BACKOFF_BASE_MS: '5',
      HTTP_BACKOFF_CAP_MS: '20',
      RATE_LIMIT_PER_SECOND: '0',
      // No approvals: every payout admitted is sent, so the provider's ledger shows what got through.
      PAYOUT_APPROVAL_ABOVE_MINOR: '500000',
      ...appIdentityEnv(idp),
      ...QUIET_RECONCILER,
    });
    const started = await startEmbeddedSandbox(base);
    sandbox = started.sandbox;
    const config = withProvider(base, started.provider);
    a = await createGateway(config);
    b = await createGateway(config);
    await pointSandboxWebhooksAt(sandbox.url, a.url);
  });

  afterAll(async () => {
    try {
      await Promise.allSettled([a?.close(), b?.close()]);
      await sandbox?.close();
      await dropSchema?.();
    } finally {
      await idp?.close();
    }
  });

  it('admits exactly PAYOUT_BENEFICIARY_DAILY_MAX_MINOR to one IBAN from two app users paying on both instances at once', async () => {
    const users = [await appUserOnJohnsBank(idp, a.url), await appUserOnJohnsBank(idp, b.url)];
    const iban = ibanOf(user(await sandboxJsonAt<Fixtures>(sandbox.url, 'GET', '/sandbox/fixtures'), 'john'));
    const ids: string[] = Array.from({ length: 16 }, () => randomUUID());
    const answers = await Promise.all(
      ids.map((transactionId, index) =>
        graphqlAt<CreateResult>(
          (index % 2 ? b : a).url,
          CREATE_PAYOUT,
          { input: payoutInput(iban, 50_000, { transactionId }) },
          users[Math.floor(index / 2) % 2]!.token,
        ),
      ),
    );
    const paid = answers.filter((answer) => answer.data?.createPayout.status === 'authorised');
    const refused = answers.filter((answer) => answer.errors?.[0]?.extensions?.limit === 'beneficiary-daily');
    expect(paid).toHaveLength(10);
    expect(refused).toHaveLength(6);
    const { withdrawals } = await sandboxJsonAt<{ withdrawals: LedgerEntry[] }>(sandbox.url, 'GET', '/sandbox/ledger');
    expect(withdrawals.filter((entry) => ids.includes(entry.id)).reduce((sum, entry) => sum + entry.amount_in_minor, 0)).toBe(500_000);
  });
});
