import { randomUUID } from 'node:crypto';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import {
  APPROVE_PAYOUT,
  CREATE_PAYOUT,
  DECLINE_PAYOUT,
  dataOf,
  fixtures,
  ibanOf,
  injectFault,
  ledger,
  onlyError,
  PAYOUT_UPDATED,
  providerRequests,
  QUIET_RECONCILER,
  READ_PAYOUT,
  user,
  VERIFY,
  VIEWER_MONEY,
  type PayoutView,
} from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

type CreateResult = { createPayout: PayoutView };

async function withdrawalPosts(stack: Stack): Promise<number> {
  return (await providerRequests(stack)).filter((request) => request.method === 'POST' && request.path === '/v1/withdrawals').length;
}

function payoutInput(iban: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { beneficiaryName: 'John Doe', beneficiaryIban: iban, beneficiaryReference: 'Winnings', amountInMinor: 2_500, currency: 'GBP', ...overrides };
}

describe('the payout policy', () => {
  let stack: Stack;
  let johnIban: string;
  let session: string;

  beforeAll(async () => {
    stack = await startStack({ env: QUIET_RECONCILER });
    johnIban = ibanOf(user(await fixtures(stack), 'john'));
    session = await stack.signIn('john', 'doe');
    dataOf(await stack.graphql(VERIFY, { name: 'John Doe' }, session));
  });

  afterEach(async () => {
    await disposeWsClients();
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('refuses a payout above PAYOUT_MAX_MINOR, for a session and a merchant key alike, before any provider call', async () => {
    const before = await withdrawalPosts(stack);
    for (const [token, amountInMinor] of [
      [session, 100_001],
      [stack.merchantKey, 100_001],
      [session, 9_007_199_254_740_991],
    ] as const) {
      const error = onlyError(await stack.graphql(CREATE_PAYOUT, { input: payoutInput(johnIban, { amountInMinor }) }, token));
      expect(error.extensions).toMatchObject({ code: 'PAYOUT_LIMIT_EXCEEDED', limit: 'per-payout', remainingInMinor: 100_000 });
      expect(error.message).toContain('100000');
    }
    expect(await withdrawalPosts(stack)).toBe(before);
  });

  it('keeps a session’s payout above the approval threshold until a merchant key approves it, and pushes the change', async () => {
    const before = await withdrawalPosts(stack);
    const waiting = dataOf(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input: payoutInput(johnIban, { amountInMinor: 60_000 }) }, session)).createPayout;
    expect(waiting).toMatchObject({ status: 'awaiting-approval', amountInMinor: 60_000, authorisedAt: null });
    expect(await withdrawalPosts(stack)).toBe(before);

    const live = connectWs(stack.gateway.url, session).subscribe<{ payoutUpdated: { status: string } }>(PAYOUT_UPDATED, { id: waiting.transactionId });
    expect((await live.next()).data?.payoutUpdated.status).toBe('awaiting-approval');

    expect(onlyError(await stack.graphql(APPROVE_PAYOUT, { id: waiting.transactionId }, session)).extensions?.code).toBe('FORBIDDEN');
    const approved = dataOf(
      await stack.graphql<{ approvePayout: { status: string } }>(APPROVE_PAYOUT, { id: waiting.transactionId }, stack.merchantKey),
    ).approvePayout;
    expect(approved.status).toBe('authorised');
    expect(await withdrawalPosts(stack)).toBe(before + 1);
    expect((await ledger(stack)).withdrawals.filter((entry) => entry.id === waiting.transactionId)).toHaveLength(1);
    const pushed = await waitFor(
      () => live.results.map((result) => result.data?.payoutUpdated.status).find((status) => status === 'authorised'),
      'the approval pushed',
    );
    expect(pushed).toBe('authorised');

    const again = onlyError(await stack.graphql(APPROVE_PAYOUT, { id: waiting.transactionId }, stack.merchantKey));
    expect(again.extensions?.code).toBe('BAD_USER_INPUT');
    expect(again.message).toContain('authorised');
  });

  it('ends a declined payout as declined, never sent, and frees its amount under the daily limit', async () => {
    const before = await withdrawalPosts(stack);
    const waiting = dataOf(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input: payoutInput(johnIban, { amountInMinor: 90_000 }) }, session)).createPayout;
    const live = connectWs(stack.gateway.url, session).subscribe<{ payoutUpdated: { status: string } }>(PAYOUT_UPDATED, { id: waiting.transactionId });
    expect((await live.next()).data?.payoutUpdated.status).toBe('awaiting-approval');

    const badReason = onlyError(await stack.graphql(DECLINE_PAYOUT, { id: waiting.transactionId, reason: '   ' }, stack.merchantKey));
    expect(badReason.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'reason' });
    const declined = dataOf(
      await stack.graphql<{ declinePayout: { status: string } }>(DECLINE_PAYOUT, { id: waiting.transactionId, reason: 'Unusual amount' }, stack.merchantKey),
    );
    expect(declined.declinePayout.status).toBe('declined');
    expect((await live.next()).data?.payoutUpdated.status).toBe('declined');
    await live.ended;
    expect(onlyError(await stack.graphql(APPROVE_PAYOUT, { id: waiting.transactionId }, stack.merchantKey)).extensions?.code).toBe('BAD_USER_INPUT');
    const read = dataOf(await stack.graphql<{ payout: PayoutView }>(READ_PAYOUT, { id: waiting.transactionId }, session)).payout;
    expect(read.status).toBe('declined');
    expect(await withdrawalPosts(stack)).toBe(before);
  });

  it('refuses a payout past the daily limit with what is left, counting approved and pending payouts but not declined ones', async () => {
    // So far today: 60 000 approved (the declined 90 000 does not count) of 500 000.
    const spent = 60_000;
    const merchantPays = dataOf(
      await stack.graphql<CreateResult>(CREATE_PAYOUT, { input: payoutInput(johnIban, { amountInMinor: 100_000 }) }, stack.merchantKey),
    );
    expect(merchantPays.createPayout.status).toBe('authorised');
    for (let paid = spent; paid + 50_000 <= 500_000; paid += 50_000) {
      // Each its own reference: identical payouts without transactionId would answer the first.
      dataOf(await stack.graphql(CREATE_PAYOUT, { input: payoutInput(johnIban, { amountInMinor: 50_000, beneficiaryReference: `Part ${paid}` }) }, session));
    }
    const before = await withdrawalPosts(stack);
    const error = onlyError(await stack.graphql(CREATE_PAYOUT, { input: payoutInput(johnIban, { amountInMinor: 40_001 }) }, session));
    expect(error.extensions).toMatchObject({ code: 'PAYOUT_LIMIT_EXCEEDED', limit: 'user-daily', remainingInMinor: 40_000 });
    // Admitted, and held for approval: the user's 24-hour total is far above the approval threshold.
    expect(
      dataOf(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input: payoutInput(johnIban, { amountInMinor: 40_000 }) }, session)).createPayout.status,
    ).toBe('awaiting-approval');
    expect(onlyError(await stack.graphql(CREATE_PAYOUT, { input: payoutInput(johnIban, { amountInMinor: 1 }) }, session)).extensions?.remainingInMinor).toBe(0);
    expect(await withdrawalPosts(stack)).toBe(before);
  });
});

describe('payout submissions that go wrong', () => {
  let stack: Stack;
  let seeded: Fixtures;
  let johnIban: string;
  let session: string;

  beforeEach(async () => {
    stack = await startStack({ env: { ...QUIET_RECONCILER, PAYOUT_SUBMISSION_EXPIRY_MS: '3000' } });
    seeded = await fixtures(stack);
    johnIban = ibanOf(user(seeded, 'john'));
    session = await stack.signIn('john', 'doe');
    dataOf(await stack.graphql(VERIFY, { name: 'John Doe' }, session));
  });

  afterEach(async () => {
    await stack?.close();
  });

  it('pays once when a client gives up on a slow createPayout without transactionId and sends it again', async () => {
    await injectFault(stack, { match: 'POST /v1/withdrawals', latencyMs: 2_000, times: 1 });
    const input = payoutInput(johnIban, { beneficiaryReference: 'Retry me' });
    const body = JSON.stringify({ query: CREATE_PAYOUT, variables: { input } });
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${session}` };
    await expect(fetch(`${stack.gateway.url}/graphql`, { method: 'POST', headers, body, signal: AbortSignal.timeout(500) })).rejects.toThrow();
    const retried = dataOf(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input }, session)).createPayout;
    expect(retried.status).toBe('authorised');
    const withdrawals = (await ledger(stack)).withdrawals.filter((entry) => entry.kind === 'withdrawal');
    expect(withdrawals).toHaveLength(1);
    expect(withdrawals[0]!.id).toBe(retried.transactionId);
    expect(await withdrawalPosts(stack)).toBe(1);

    // A deliberate second identical payout names a new transactionId.
    const second = dataOf(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input: { ...input, transactionId: randomUUID() } }, session)).createPayout;
    expect(second.transactionId).not.toBe(retried.transactionId);
    expect((await ledger(stack)).withdrawals).toHaveLength(2);
  });

  it('keeps a payout the provider answered 409 after creating it, and reads it back instead of losing it', async () => {
    await injectFault(stack, {
      match: 'POST /v1/withdrawals',
      status: 409,
      body: { type: 'https://docs.truelayer.com/docs/error-types#idempotency-key-concurrency-conflict', title: 'Conflict', status: 409 },
      afterProcessing: true,
      times: 1,
    });
    const transactionId = randomUUID();
    const created = dataOf(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input: payoutInput(johnIban, { transactionId }) }, session)).createPayout;
    expect(created).toMatchObject({ transactionId, status: 'authorised' });
    expect(dataOf(await stack.graphql<{ payout: PayoutView | null }>(READ_PAYOUT, { id: transactionId }, session)).payout?.transactionId).toBe(transactionId);
    const listed = dataOf(await stack.graphql<{ viewer: { payouts: PayoutView[] } }>(VIEWER_MONEY, {}, session)).viewer.payouts;
    expect(listed.map((payout) => payout.transactionId)).toEqual([transactionId]);
    expect((await ledger(stack)).withdrawals).toHaveLength(1);
  });

  it('keeps an unreadable 200 answer and reconciles it with the provider', async () => {
    await injectFault(stack, { match: 'POST /v1/withdrawals', status: 200, body: { results: [null] }, afterProcessing: true, times: 1 });
    const transactionId = randomUUID();
    const created = dataOf(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input: payoutInput(johnIban, { transactionId }) }, session)).createPayout;
    expect(created).toMatchObject({ transactionId, status: 'authorised' });
    expect((await ledger(stack)).withdrawals).toHaveLength(1);
  });

  it('expires a payout never accepted by the provider, so that no retry or merchant key can send it', async () => {
    await injectFault(stack, { match: 'POST /v1/withdrawals', status: 503, times: 3 });
    const transactionId = randomUUID();
    const input = payoutInput(johnIban, { transactionId });
    expect(onlyError(await stack.graphql(CREATE_PAYOUT, { input }, session)).extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    const pending = dataOf(await stack.graphql<{ payout: PayoutView }>(READ_PAYOUT, { id: transactionId }, session)).payout;
    expect(pending.status).toBe('pending-submission');

    const resend = onlyError(await stack.graphql(CREATE_PAYOUT, { input }, stack.merchantKey));
    expect(resend.extensions?.code).toBe('IDEMPOTENCY_CONFLICT');
    expect(await withdrawalPosts(stack)).toBe(3);

    await waitFor(
      async () => {
        await stack.gateway.scheduler.runOnce();
        return (await stack.gateway.features.payouts.ledger.get(transactionId))?.status === 'expired' || undefined;
      },
      'the reconciler to expire the payout',
      8_000,
      250,
    );
    const retried = dataOf(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input }, session)).createPayout;
    expect(retried.status).toBe('expired');
    expect(await withdrawalPosts(stack)).toBe(3);
    expect((await ledger(stack)).withdrawals).toHaveLength(0);
    const metrics = await (await fetch(`${stack.gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/bankgraph_reconciler_repairs_total\{kind="payout_expired"\} 1/);
  });

  it('stores what the provider has for a payout whose answer was lost, when the reconciler runs', async () => {
    await injectFault(stack, { match: 'POST /v1/withdrawals', reset: true, afterProcessing: true, times: 3 });
    const transactionId = randomUUID();
    expect(onlyError(await stack.graphql(CREATE_PAYOUT, { input: payoutInput(johnIban, { transactionId }) }, session)).extensions?.code).toBe(
      'UPSTREAM_UNAVAILABLE',
    );
    expect((await stack.gateway.features.payouts.ledger.get(transactionId))?.status).toBe('pending-submission');
    await stack.gateway.scheduler.runOnce();
    expect((await stack.gateway.features.payouts.ledger.get(transactionId))?.status).toBe('authorised');
    expect((await ledger(stack)).withdrawals).toHaveLength(1);
  });
});
