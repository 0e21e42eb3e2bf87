import { randomUUID } from 'node:crypto';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import {
  CREATE_PAYOUT,
  dataOf,
  fixtures,
  ibanOf,
  ledger,
  onlyError,
  paymentsIn,
  providerRequests,
  READ_PAYMENT,
  READ_PAYOUT,
  REFUND_PAYMENT,
  user,
  VERIFY,
  VIEWER_MONEY,
  type PayoutView,
} from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';

type ViewerPayouts = { viewer: { payouts: PayoutView[] } };

/**
 * Who may do what. One stack for the file: every test reads or is refused, except the payout the set-up makes,
 * so they cannot disturb each other.
 */
describe('authorization of the money operations', () => {
  let stack: Stack;
  let seeded: Fixtures;
  let john: string;
  let jane: string;
  let johnsPayout: PayoutView;
  let settledPaymentId: string;

  beforeAll(async () => {
    stack = await startStack();
    seeded = await fixtures(stack);
    settledPaymentId = paymentsIn(seeded, 'settled')[0]!.id;
    john = await stack.signIn('john', 'doe');
    jane = await stack.signIn('jane', 'doe');
    dataOf(await stack.graphql(VERIFY, { name: 'John Doe' }, john));
    johnsPayout = dataOf(
      await stack.graphql<{ createPayout: PayoutView }>(
        CREATE_PAYOUT,
        {
          input: {
            beneficiaryName: 'John Doe',
            beneficiaryIban: ibanOf(user(seeded, 'john')),
            beneficiaryReference: 'Johns payout',
            amountInMinor: 1_234,
            currency: 'GBP',
          },
        },
        john,
      ),
    ).createPayout;
  });

  afterAll(async () => {
    await stack?.close();
  });

  const payoutInput = (overrides: Record<string, unknown> = {}) => ({
    beneficiaryName: 'John Doe',
    beneficiaryIban: ibanOf(user(seeded, 'john')),
    beneficiaryReference: 'Auth test',
    amountInMinor: 100,
    currency: 'GBP',
    ...overrides,
  });

  const operations: [string, string, () => Record<string, unknown>][] = [
    ['verifyAccountHolder', VERIFY, () => ({ name: 'John Doe' })],
    ['createPayout', CREATE_PAYOUT, () => ({ input: payoutInput() })],
    ['refundPayment', REFUND_PAYMENT, () => ({ input: { paymentId: settledPaymentId, amountInMinor: 1, reference: 'Auth test' } })],
    ['payout', READ_PAYOUT, () => ({ id: johnsPayout.transactionId })],
    ['payment', READ_PAYMENT, () => ({ id: settledPaymentId })],
  ];

  it.each(operations)('refuses %s without credentials: UNAUTHENTICATED, and no provider call', async (_name, document, variables) => {
    await stack.sandboxJson('DELETE', '/sandbox/requests');
    const result = await stack.graphql(document, variables());
    expect(onlyError(result).extensions?.code).toBe('UNAUTHENTICATED');
    expect(await providerRequests(stack)).toEqual([]);
  });

  it.each(operations)('refuses %s with an unknown bearer token: UNAUTHENTICATED', async (_name, document, variables) => {
    const result = await stack.graphql(document, variables(), 'not-a-session-or-key');
    expect(onlyError(result).extensions?.code).toBe('UNAUTHENTICATED');
    expect(onlyError(result).message).toBe(
      'The bearer token is not a merchant key of this gateway, nor a session token it issued (those start with bgs_). ' +
        'A merchant key must be one of MERCHANT_KEYS, the same list on every instance of the gateway; a session comes from /auth/login.',
    );
  });

  it('tells a session that ended from a merchant key it does not know', async () => {
    const session = await stack.signIn('lee', 'doe');
    expect(session).toMatch(/^bgs_[A-Za-z0-9_-]{43}$/);
    const logout = await fetch(`${stack.gateway.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${session}` } });
    expect(logout.status).toBe(204);
    const ended = onlyError(await stack.graphql(READ_PAYOUT, { id: johnsPayout.transactionId }, session));
    expect(ended).toMatchObject({
      extensions: { code: 'UNAUTHENTICATED' },
      message: expect.stringMatching(/^This session has ended|^The session token is unknown or has expired/),
    });
    const otherKey = onlyError(await stack.graphql(READ_PAYMENT, { id: settledPaymentId }, 'merchant-key-of-another-instance'));
    expect(otherKey.message).toContain('not a merchant key of this gateway');
  });

  it('checks who asks before what they sent: no credentials and a bad input is UNAUTHENTICATED', async () => {
    const result = await stack.graphql(CREATE_PAYOUT, { input: payoutInput({ beneficiaryIban: 'nonsense' }) });
    expect(onlyError(result).extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('refuses refunds and payment reads to a session: FORBIDDEN', async () => {
    await stack.sandboxJson('DELETE', '/sandbox/requests');
    const refunded = await stack.graphql(REFUND_PAYMENT, { input: { paymentId: settledPaymentId, amountInMinor: 1, reference: 'Not mine' } }, john);
    expect(onlyError(refunded).extensions?.code).toBe('FORBIDDEN');
    const read = await stack.graphql(READ_PAYMENT, { id: settledPaymentId }, john);
    expect(onlyError(read).extensions?.code).toBe('FORBIDDEN');
    expect(await providerRequests(stack)).toEqual([]);
    expect((await ledger(stack)).refunds).toEqual([]);
  });

  it('refuses verification to a merchant key, which is no bank user: FORBIDDEN', async () => {
    const result = await stack.graphql(VERIFY, { name: 'John Doe' }, stack.merchantKey);
    expect(onlyError(result).extensions?.code).toBe('FORBIDDEN');
  });

  it('lets a merchant key refund and read payments', async () => {
    const refund = dataOf(
      await stack.graphql<{ refundPayment: { id: string } }>(
        REFUND_PAYMENT,
        { input: { paymentId: settledPaymentId, amountInMinor: 1, reference: 'Merchant' } },
        stack.merchantKey,
      ),
    ).refundPayment;
    const read = dataOf(await stack.graphql<{ payment: { refunds: { id: string }[] } }>(READ_PAYMENT, { id: settledPaymentId }, stack.merchantKey));
    expect(read.payment.refunds.map((entry) => entry.id)).toContain(refund.id);
  });

  it('does not show a user’s payout to another user, by id or in their list', async () => {
    const byId = await stack.graphql<{ payout: PayoutView | null }>(READ_PAYOUT, { id: johnsPayout.transactionId }, jane);
    expect(byId.errors).toBeUndefined();
    expect(byId.data).toEqual({ payout: null });
    // The same answer as for an id that does not exist, so ids cannot be probed.
    expect(dataOf(await stack.graphql(READ_PAYOUT, { id: randomUUID() }, jane))).toEqual({ payout: null });
    expect(dataOf(await stack.graphql<ViewerPayouts>(VIEWER_MONEY, {}, jane)).viewer.payouts).toEqual([]);
  });

  it('shows the payout to the user who made it and to a merchant key', async () => {
    const own = dataOf(await stack.graphql<{ payout: PayoutView }>(READ_PAYOUT, { id: johnsPayout.transactionId }, john)).payout;
    expect(own.transactionId).toBe(johnsPayout.transactionId);
    const merchant = dataOf(await stack.graphql<{ payout: PayoutView }>(READ_PAYOUT, { id: johnsPayout.transactionId }, stack.merchantKey)).payout;
    expect(merchant).toMatchObject({ transactionId: johnsPayout.transactionId, amountInMinor: 1_234, beneficiaryReference: 'Johns payout' });
    expect(dataOf(await stack.graphql<ViewerPayouts>(VIEWER_MONEY, {}, john)).viewer.payouts.map((payout) => payout.transactionId)).toEqual([
      johnsPayout.transactionId,
    ]);
  });

  it('shows a merchant key a payout created at the provider without the gateway, and no session', async () => {
    // Straight through the provider client: the provider has the withdrawal, the gateway's store does not.
    const transactionId = randomUUID();
    await stack.gateway.features.provider.payouts.createWithdrawal({
      transaction_id: transactionId,
      beneficiary_name: 'Jane Smith',
      beneficiary_iban: ibanOf(user(seeded, 'jane')),
      beneficiary_reference: 'Back office',
      currency: 'GBP',
      amount_in_minor: 4_321,
      context_code: 'withdrawal',
    });
    const merchant = dataOf(await stack.graphql<{ payout: PayoutView | null }>(READ_PAYOUT, { id: transactionId }, stack.merchantKey)).payout;
    expect(merchant).toMatchObject({ transactionId, amountInMinor: 4_321, status: 'authorised' });
    expect(dataOf(await stack.graphql(READ_PAYOUT, { id: transactionId }, jane))).toEqual({ payout: null });
  });

  it('does not let another user pay out to an IBAN only john verified, nor reuse his transactionId', async () => {
    const toJohn = await stack.graphql(CREATE_PAYOUT, { input: payoutInput() }, jane);
    expect(onlyError(toJohn).extensions?.code).toBe('BENEFICIARY_NOT_VERIFIED');

    dataOf(await stack.graphql(VERIFY, { name: 'Jane Smith' }, jane));
    const reused = await stack.graphql(
      CREATE_PAYOUT,
      { input: payoutInput({ transactionId: johnsPayout.transactionId, beneficiaryName: 'Jane Smith', beneficiaryIban: ibanOf(user(seeded, 'jane')) }) },
      jane,
    );
    expect(onlyError(reused).extensions?.code).toBe('IDEMPOTENCY_CONFLICT');
    expect(onlyError(reused).message).not.toContain('John');
  });

  it('refuses the viewer’s money fields to a merchant key: FORBIDDEN', async () => {
    const result = await stack.graphql(VIEWER_MONEY, {}, stack.merchantKey);
    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});
