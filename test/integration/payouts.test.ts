import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import {
  advanceSandboxClock,
  CREATE_PAYOUT,
  dataOf,
  fixtures,
  ibanOf,
  injectFault,
  ledger,
  onlyError,
  providerRequests,
  READ_PAYOUT,
  user,
  VERIFY,
  VIEWER_MONEY,
  type PayoutView,
} from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';

type CreateResult = { createPayout: PayoutView };
type ReadResult = { payout: PayoutView | null };
type ViewerMoney = { viewer: { verifiedBeneficiaries: { iban: string; name: string; verifiedAt: string }[]; payouts: PayoutView[] } };

/** IBANs from the ISO 13616 registry's examples: valid, and held by nobody in the sandbox. */
const STRANGER_IBAN = 'GB29NWBK60161331926819';

describe('payouts', () => {
  let stack: Stack;
  let seeded: Fixtures;
  let johnIban: string;

  beforeEach(async () => {
    stack = await startStack();
    seeded = await fixtures(stack);
    johnIban = ibanOf(user(seeded, 'john'));
  });

  afterEach(async () => {
    await stack?.close();
  });

  /** Signs john in and verifies his name, as the mobile app does before its first payout. */
  async function verifiedJohn(): Promise<string> {
    const session = await stack.signIn('john', 'doe');
    dataOf(await stack.graphql(VERIFY, { name: 'John Doe' }, session));
    return session;
  }

  function payoutInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      transactionId: randomUUID(),
      beneficiaryName: 'John Doe',
      beneficiaryIban: johnIban,
      beneficiaryReference: 'Winnings 42',
      amountInMinor: 2_500,
      currency: 'GBP',
      ...overrides,
    };
  }

  const withdrawalPosts = async (): Promise<number> =>
    (await providerRequests(stack)).filter((request) => request.method === 'POST' && request.path === '/v1/withdrawals').length;

  it('runs the mobile flow: sign in, verify the holder name, pay out to the verified IBAN, read it until settled', async () => {
    const session = await stack.signIn('john', 'doe');

    const verification = dataOf(
      await stack.graphql<{ verifyAccountHolder: { verified: boolean; report: { iban: string }[] } }>(VERIFY, { name: 'John Doe' }, session),
    );
    expect(verification.verifyAccountHolder.verified).toBe(true);
    expect(verification.verifyAccountHolder.report.map((entry) => entry.iban)).toContain(johnIban);

    const beneficiaries = dataOf(await stack.graphql<ViewerMoney>(VIEWER_MONEY, {}, session)).viewer.verifiedBeneficiaries;
    const johnAccounts = user(seeded, 'john').accounts.map((account) => account.account.account_number.iban);
    expect(beneficiaries.map((entry) => entry.iban).sort()).toEqual([...johnAccounts].sort());
    expect(beneficiaries.every((entry) => entry.name === 'John Doe' && !Number.isNaN(Date.parse(entry.verifiedAt)))).toBe(true);

    const input = payoutInput({ beneficiaryIban: johnIban.replace(/(.{4})/g, '$1 ').toLowerCase() });
    const created = dataOf(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input }, session)).createPayout;
    expect(created).toMatchObject({
      transactionId: input.transactionId,
      status: 'authorised',
      beneficiaryName: 'John Doe',
      beneficiaryIban: johnIban,
      beneficiaryReference: 'Winnings 42',
      amountInMinor: 2_500,
      currency: 'GBP',
      contextCode: 'withdrawal',
      settledAt: null,
    });
    expect(created.authorisedAt).not.toBeNull();

    const seen: string[] = [];
    let payout: PayoutView | null = null;
    for (let step = 0; step < 10 && payout?.status !== 'settled'; step += 1) {
      await advanceSandboxClock(stack, 5);
      payout = dataOf(await stack.graphql<ReadResult>(READ_PAYOUT, { id: input.transactionId }, session)).payout;
      if (seen.at(-1) !== payout?.status) seen.push(payout!.status);
    }
    expect(seen).toEqual(['submitted', 'settled']);
    expect(payout).toMatchObject({ status: 'settled', rejectedAt: null, failedAt: null });
    expect(payout!.submittedAt).not.toBeNull();
    expect(payout!.settledAt).not.toBeNull();

    const listed = dataOf(await stack.graphql<ViewerMoney>(VIEWER_MONEY, {}, session)).viewer.payouts;
    expect(listed).toEqual([payout]);
    expect((await ledger(stack)).withdrawals).toHaveLength(1);
  });

  it('refuses a payout to an IBAN the user has not verified, without calling the provider', async () => {
    const session = await verifiedJohn();
    await stack.sandboxJson('DELETE', '/sandbox/requests');

    const stranger = await stack.graphql(CREATE_PAYOUT, { input: payoutInput({ beneficiaryIban: STRANGER_IBAN }) }, session);
    expect(stranger.data).toBeNull();
    expect(onlyError(stranger)).toMatchObject({ extensions: { code: 'BENEFICIARY_NOT_VERIFIED' } });
    expect(onlyError(stranger).message).toContain(STRANGER_IBAN);

    // Jane's account is a real account of the sandbox bank, but john never verified it.
    const janes = await stack.graphql(
      CREATE_PAYOUT,
      { input: payoutInput({ beneficiaryIban: ibanOf(user(seeded, 'jane')), beneficiaryName: 'Jane Smith' }) },
      session,
    );
    expect(onlyError(janes).extensions?.code).toBe('BENEFICIARY_NOT_VERIFIED');

    expect(await providerRequests(stack)).toEqual([]);
    expect((await ledger(stack)).withdrawals).toEqual([]);
  });

  it('refuses a user who never verified, and a beneficiary name other than the verified holder', async () => {
    const lee = await stack.signIn('lee', 'doe');
    const leeAttempt = await stack.graphql(
      CREATE_PAYOUT,
      { input: payoutInput({ beneficiaryIban: ibanOf(user(seeded, 'lee')), beneficiaryName: 'Lee Ming-Hao' }) },
      lee,
    );
    expect(onlyError(leeAttempt).extensions?.code).toBe('BENEFICIARY_NOT_VERIFIED');
    expect(onlyError(leeAttempt).message).toMatch(/verifyAccountHolder/);

    const john = await verifiedJohn();
    await stack.sandboxJson('DELETE', '/sandbox/requests');
    const wrongName = await stack.graphql(CREATE_PAYOUT, { input: payoutInput({ beneficiaryName: 'Johnny Doe' }) }, john);
    expect(onlyError(wrongName).extensions?.code).toBe('BENEFICIARY_NOT_VERIFIED');
    expect(onlyError(wrongName).message).toMatch(/"Johnny Doe" is not the holder name the bank verified/);
    expect(await withdrawalPosts()).toBe(0);

    // Case and spacing do not matter.
    dataOf(await stack.graphql(CREATE_PAYOUT, { input: payoutInput({ beneficiaryName: ' john  DOE ' }) }, john));
  });

  it.each([
    ['transactionId', { transactionId: 'payout-1' }, /UUID/],
    ['beneficiaryName', { beneficiaryName: '' }, /non-empty/],
    ['beneficiaryName', { beneficiaryName: 'J'.repeat(141) }, /at most 140/],
    ['beneficiaryIban', { beneficiaryIban: 'GB00MOCK00000000000000' }, /check digits/],
    ['beneficiaryIban', { beneficiaryIban: 'not an iban' }, /IBAN/],
    ['beneficiaryReference', { beneficiaryReference: '' }, /1 to 18 characters/],
    ['beneficiaryReference', { beneficiaryReference: 'A reference too long' }, /at most 18 characters/],
    ['currency', { currency: 'USD' }, /GBP or EUR/],
    ['currency', { currency: 'pounds' }, /ISO 4217/],
    ['amountInMinor', { amountInMinor: 0 }, /positive/],
    ['amountInMinor', { amountInMinor: -100 }, /positive/],
  ])('refuses a bad %s with BAD_USER_INPUT naming the field, before any provider call', async (field, change, message) => {
    const session = await verifiedJohn();
    await stack.sandboxJson('DELETE', '/sandbox/requests');
    const result = await stack.graphql(CREATE_PAYOUT, { input: payoutInput(change) }, session);
    const error = onlyError(result);
    expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: `input.${field}` });
    expect(error.message).toMatch(message);
    expect(await providerRequests(stack)).toEqual([]);
  });

  it('refuses amounts that are not safe integers at the scalar', async () => {
    const session = await verifiedJohn();
    for (const amountInMinor of [12.5, '100', 2 ** 53]) {
      const result = await stack.graphql(CREATE_PAYOUT, { input: payoutInput({ amountInMinor }) }, session);
      expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    expect(await withdrawalPosts()).toBe(0);
  });

  it('generates a transactionId when none is given', async () => {
    const session = await verifiedJohn();
    const { transactionId: _omitted, ...input } = payoutInput();
    const created = dataOf(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input }, session)).createPayout;
    expect(created.transactionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect((await ledger(stack)).withdrawals.map((entry) => entry.id)).toEqual([created.transactionId]);
  });

  it('pays once for the same transactionId sent twice in a row, and refuses it with different fields', async () => {
    const session = await verifiedJohn();
    const input = payoutInput();
    const first = dataOf(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input }, session)).createPayout;
    const again = dataOf(
      await stack.graphql<CreateResult>(CREATE_PAYOUT, { input: { ...input, transactionId: String(input.transactionId).toUpperCase() } }, session),
    ).createPayout;
    expect(again).toEqual(first);

    const changed = await stack.graphql(CREATE_PAYOUT, { input: { ...input, amountInMinor: 9_999 } }, session);
    expect(onlyError(changed).extensions?.code).toBe('IDEMPOTENCY_CONFLICT');
    expect(onlyError(changed).message).toMatch(/different amountInMinor/);

    expect((await ledger(stack)).withdrawals).toHaveLength(1);
    expect(await withdrawalPosts()).toBe(1);
  });

  it('pays once for the same transactionId sent twice at once', async () => {
    const session = await verifiedJohn();
    const input = payoutInput();
    const [a, b] = await Promise.all([
      stack.graphql<CreateResult>(CREATE_PAYOUT, { input }, session),
      stack.graphql<CreateResult>(CREATE_PAYOUT, { input }, session),
    ]);
    expect(dataOf(a).createPayout).toEqual(dataOf(b).createPayout);
    expect((await ledger(stack)).withdrawals).toHaveLength(1);
  });

  it.each([
    ['a 503 on the first POST', { match: 'POST /v1/withdrawals', status: 503, times: 1 }],
    ['a dropped connection on the first POST', { match: 'POST /v1/withdrawals', reset: true, times: 1 }],
    ['a dropped connection after the provider created the withdrawal', { match: 'POST /v1/withdrawals', afterProcessing: true, reset: true, times: 1 }],
  ])('retries through %s and pays exactly once', async (_case, fault) => {
    const session = await verifiedJohn();
    await injectFault(stack, fault);
    const input = payoutInput();
    const created = dataOf(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input }, session)).createPayout;
    expect(created).toMatchObject({ transactionId: input.transactionId, status: 'authorised' });
    expect(await withdrawalPosts()).toBe(2);
    expect((await ledger(stack)).withdrawals.map((entry) => entry.id)).toEqual([input.transactionId]);
  });

  it('keeps a payout whose submission failed after every retry, and completes it when the mutation is retried', async () => {
    const session = await verifiedJohn();
    await injectFault(stack, { match: 'POST /v1/withdrawals', status: 503, times: 3 });
    const input = payoutInput();
    const failed = await stack.graphql(CREATE_PAYOUT, { input }, session);
    expect(onlyError(failed).extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    expect((await ledger(stack)).withdrawals).toEqual([]);

    const pending = dataOf(await stack.graphql<ViewerMoney>(VIEWER_MONEY, {}, session)).viewer.payouts;
    expect(pending).toEqual([
      expect.objectContaining({ transactionId: input.transactionId, status: 'pending-submission', amountInMinor: 2_500, authorisedAt: null }),
    ]);

    const retried = dataOf(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input }, session)).createPayout;
    expect(retried).toMatchObject({ transactionId: input.transactionId, status: 'authorised' });
    expect((await ledger(stack)).withdrawals.map((entry) => entry.id)).toEqual([input.transactionId]);
  });

  it('lists the viewer’s payouts newest first with live status', async () => {
    const session = await verifiedJohn();
    const first = payoutInput({ beneficiaryReference: 'first' });
    dataOf(await stack.graphql(CREATE_PAYOUT, { input: first }, session));
    await advanceSandboxClock(stack, 6);
    const second = payoutInput({ beneficiaryReference: 'REJECT second' });
    dataOf(await stack.graphql(CREATE_PAYOUT, { input: second }, session));
    await advanceSandboxClock(stack, 6);

    const listed = dataOf(await stack.graphql<ViewerMoney>(VIEWER_MONEY, {}, session)).viewer.payouts;
    expect(listed.map(({ transactionId, status }) => ({ transactionId, status }))).toEqual([
      { transactionId: second.transactionId, status: 'rejected' },
      { transactionId: first.transactionId, status: 'submitted' },
    ]);
  });

  it('lets a merchant key pay out to an IBAN a user verified, and to no other', async () => {
    await verifiedJohn();
    const merchantPaid = dataOf(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input: payoutInput() }, stack.merchantKey)).createPayout;
    expect(merchantPaid.status).toBe('authorised');

    const unverified = await stack.graphql(CREATE_PAYOUT, { input: payoutInput({ beneficiaryIban: STRANGER_IBAN }) }, stack.merchantKey);
    expect(onlyError(unverified).extensions?.code).toBe('BENEFICIARY_NOT_VERIFIED');
    const wrongName = await stack.graphql(CREATE_PAYOUT, { input: payoutInput({ beneficiaryName: 'Somebody Else' }) }, stack.merchantKey);
    expect(onlyError(wrongName).extensions?.code).toBe('BENEFICIARY_NOT_VERIFIED');
    expect(onlyError(wrongName).message).not.toContain('John Doe');
    expect((await ledger(stack)).withdrawals).toHaveLength(1);
  });
});

describe('verified beneficiaries are durable', () => {
  let directory: string;
  const stacks: Stack[] = [];

  beforeAll(() => {
    directory = mkdtempSync(path.join(tmpdir(), 'bankgraph-payouts-'));
  });

  afterAll(async () => {
    await Promise.allSettled(stacks.map((stack) => stack.close()));
    rmSync(directory, { recursive: true, force: true });
  });

  it('keeps a user’s verified IBANs and payouts across a gateway restart', async () => {
    const env = { STORE_URL: `sqlite://${path.join(directory, 'gateway.sqlite')}` };
    const first = await startStack({ env });
    stacks.push(first);
    const session = await first.signIn('john', 'doe');
    dataOf(await first.graphql(VERIFY, { name: 'John Doe' }, session));
    const paid = dataOf(
      await first.graphql<CreateResult>(
        CREATE_PAYOUT,
        {
          input: {
            beneficiaryName: 'John Doe',
            beneficiaryIban: ibanOf(user(await fixtures(first), 'john')),
            beneficiaryReference: 'before restart',
            amountInMinor: 100,
            currency: 'GBP',
          },
        },
        session,
      ),
    ).createPayout;
    const before = dataOf(await first.graphql<ViewerMoney>(VIEWER_MONEY, {}, session)).viewer;
    expect(before.verifiedBeneficiaries.length).toBeGreaterThan(0);
    await first.close();

    const second = await startStack({ env });
    stacks.push(second);
    const again = await second.signIn('john', 'doe');
    const after = dataOf(await second.graphql<ViewerMoney>(VIEWER_MONEY, {}, again)).viewer;
    expect(after.verifiedBeneficiaries).toEqual(before.verifiedBeneficiaries);
    // The new sandbox never saw the old withdrawal, so the payout shows as last stored.
    expect(after.payouts).toEqual([paid]);

    // And the restarted gateway pays to them without a new verification.
    const iban = before.verifiedBeneficiaries[0]!.iban;
    const created = await second.graphql<CreateResult>(
      CREATE_PAYOUT,
      { input: { beneficiaryName: 'John Doe', beneficiaryIban: iban, beneficiaryReference: 'after restart', amountInMinor: 100, currency: 'GBP' } },
      again,
    );
    expect(dataOf(created).createPayout.status).toBe('authorised');
  });
});
