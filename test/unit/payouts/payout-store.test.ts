import { randomUUID } from 'node:crypto';
import { openDatabase, type Database } from '../../../src/platform/db/database';
import { BeneficiaryNotVerifiedError, ForbiddenError, PayoutLimitExceededError } from '../../../src/platform/errors/gateway-errors';
import { BeneficiaryLedger } from '../../../src/beneficiaries/beneficiary.store';
import { PayoutStore } from '../../../src/payouts/payout.store';
import type { PayoutOwner, PayoutRequest } from '../../../src/payouts/payout.model';
import { approveAwaiting, recordPayout } from '../../../src/payouts/payout-transactions';
import { AWAITING_APPROVAL, CONFLICT, DECLINED, EXPIRED, PENDING_SUBMISSION } from '../../../src/payouts/payout-status';
import { storeBackends } from '../../helpers/store-backends';

const BACKENDS = storeBackends('payout_ledger');

// The tests below share one IBAN across users: the cap per IBAN is out of their way, and has tests of its own.
const POLICY = {
  payoutMaxMinor: 100_000,
  payoutDailyMaxMinor: 500_000,
  payoutBeneficiaryDailyMaxMinor: Number.MAX_SAFE_INTEGER,
  payoutApprovalAboveMinor: 100_000,
};
const DAY_MS = 24 * 60 * 60 * 1000;

function request(amount: number, overrides: Partial<PayoutRequest> = {}): PayoutRequest {
  return {
    transactionId: randomUUID(),
    beneficiaryName: 'John Doe',
    beneficiaryIban: 'GB33BUKB20201555555555',
    beneficiaryReference: 'rent',
    currency: 'GBP',
    amountInMinor: amount,
    contextCode: 'withdrawal',
    ...overrides,
  };
}

describe.each(BACKENDS)('the payout ledger on $name', (backend) => {
  let cleanUp: () => Promise<void>;
  // Two handles on one store: two gateway instances (on PostgreSQL, two connection pools).
  let first: Database;
  let second: Database;
  let clock = Date.now();
  const now = (): number => clock;

  beforeAll(async () => {
    const opened = await backend.open();
    cleanUp = opened.cleanUp;
    first = await openDatabase(opened.url);
    second = await openDatabase(opened.url);
  });

  afterAll(async () => {
    await second?.close();
    await first?.close();
    await cleanUp?.();
  });

  const user = (): PayoutOwner => ({ kind: 'user', userId: `user-${randomUUID()}` });

  it('keeps a payout with its exact request, lists an owner’s newest first, and answers a repeated id with the first', async () => {
    const ledger = new PayoutStore(first, now);
    const owner = user();
    const older = await recordPayout(ledger, POLICY, { owner, request: request(100) });
    clock += 1;
    const newer = await recordPayout(ledger, POLICY, { owner, request: request(200) });
    expect(older.created && newer.created).toBe(true);
    expect(older.record.status).toBe(PENDING_SUBMISSION);
    expect((await ledger.get(older.record.transactionId))?.request).toEqual(older.record.request);
    expect((await new PayoutStore(second, now).listForOwner(owner)).map((record) => record.transactionId)).toEqual([
      newer.record.transactionId,
      older.record.transactionId,
    ]);
    const again = await recordPayout(ledger, POLICY, { owner, request: { ...request(999), transactionId: older.record.transactionId } });
    expect(again).toMatchObject({ created: false, record: { transactionId: older.record.transactionId, request: older.record.request } });
  });

  it('answers an identical request with the first payout inside the fingerprint window, and records a new one after it', async () => {
    const ledger = new PayoutStore(first, now);
    const owner = user();
    const fingerprint = { value: `fp-${randomUUID()}`, windowMs: 15 * 60 * 1000 };
    const original = await recordPayout(ledger, POLICY, { owner, request: request(500), fingerprint });
    clock += 14 * 60 * 1000;
    const retry = await recordPayout(new PayoutStore(second, now), POLICY, { owner, request: request(500), fingerprint });
    expect(retry).toMatchObject({ created: false, record: { transactionId: original.record.transactionId } });
    clock += 2 * 60 * 1000;
    const later = await recordPayout(ledger, POLICY, { owner, request: request(500), fingerprint });
    expect(later.created).toBe(true);
    expect(later.record.transactionId).not.toBe(original.record.transactionId);
  });

  it('never lets parallel payouts on two instances pass the daily limit together', async () => {
    const owner = user();
    const ledgers = [new PayoutStore(first, now), new PayoutStore(second, now)];
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, index) => recordPayout(ledgers[index % 2]!, POLICY, { owner, request: request(100_000) })),
    );
    const created = results.filter((result) => result.status === 'fulfilled');
    const refused = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
    expect(created).toHaveLength(5);
    expect(refused).toHaveLength(7);
    for (const { reason } of refused) {
      expect(reason).toBeInstanceOf(PayoutLimitExceededError);
      expect((reason as PayoutLimitExceededError).extensions).toEqual({ code: 'PAYOUT_LIMIT_EXCEEDED', limit: 'user-daily', remainingInMinor: 0 });
    }
    expect((await ledgers[0]!.listForOwner(owner)).reduce((sum, record) => sum + record.request.amountInMinor, 0)).toBe(500_000);
  });

  it('never lets parallel payouts of many users to one IBAN on two instances pass its daily cap together', async () => {
    const iban = `GB${randomUUID().replace(/-/g, '').slice(0, 20).toUpperCase()}`;
    const policy = { ...POLICY, payoutBeneficiaryDailyMaxMinor: 500_000 };
    const ledgers = [new PayoutStore(first, now), new PayoutStore(second, now)];
    const users = Array.from({ length: 4 }, user);
    const results = await Promise.allSettled(
      Array.from({ length: 16 }, (_, index) =>
        recordPayout(ledgers[index % 2]!, policy, { owner: users[index % 4]!, request: request(50_000, { beneficiaryIban: iban }) }),
      ),
    );
    const refused = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(10);
    expect(refused).toHaveLength(6);
    for (const { reason } of refused) {
      expect((reason as PayoutLimitExceededError).extensions).toEqual({ code: 'PAYOUT_LIMIT_EXCEEDED', limit: 'beneficiary-daily', remainingInMinor: 0 });
    }
    // A merchant key's own payouts to it are neither refused nor counted; another IBAN has a cap of its own.
    const merchant: PayoutOwner = { kind: 'merchant', keyId: `merchant-${randomUUID()}` };
    expect((await recordPayout(ledgers[0]!, policy, { owner: merchant, request: request(100_000, { beneficiaryIban: iban }) })).created).toBe(true);
    expect((await recordPayout(ledgers[1]!, policy, { owner: user(), request: request(50_000, { beneficiaryIban: `${iban.slice(0, -1)}X` }) })).created).toBe(
      true,
    );
    await expect(recordPayout(ledgers[1]!, policy, { owner: user(), request: request(1, { beneficiaryIban: iban }) })).rejects.toMatchObject({
      extensions: { limit: 'beneficiary-daily', remainingInMinor: 0 },
    });
    clock += DAY_MS;
    expect((await recordPayout(ledgers[0]!, policy, { owner: user(), request: request(50_000, { beneficiaryIban: iban }) })).created).toBe(true);
  });

  it('asks for approval once the user’s rolling 24 h total, this payout included, passes the threshold', async () => {
    const ledger = new PayoutStore(first, now);
    const owner = user();
    const policy = { ...POLICY, payoutApprovalAboveMinor: 50_000 };
    expect((await recordPayout(ledger, policy, { owner, request: request(30_000) })).record.status).toBe(PENDING_SUBMISSION);
    expect((await recordPayout(ledger, policy, { owner, request: request(20_000) })).record.status).toBe(PENDING_SUBMISSION);
    expect((await recordPayout(ledger, policy, { owner, request: request(1) })).record.status).toBe(AWAITING_APPROVAL);
    clock += DAY_MS;
    expect((await recordPayout(ledger, policy, { owner, request: request(50_000) })).record.status).toBe(PENDING_SUBMISSION);
  });

  it('counts the last 24 hours only, without declined, expired, failed or rejected payouts, per currency', async () => {
    const ledger = new PayoutStore(first, now);
    const owner = user();
    const limits = { ...POLICY, payoutMaxMinor: 1_000_000, payoutApprovalAboveMinor: 1_000_000 };
    await recordPayout(ledger, limits, { owner, request: request(100_000) });
    clock += DAY_MS - 1_000;
    await recordPayout(ledger, limits, { owner, request: request(100_000) });
    const declined = await recordPayout(ledger, limits, { owner, request: request(100_000) });
    const expired = await recordPayout(ledger, limits, { owner, request: request(100_000) });
    const failed = await recordPayout(ledger, limits, { owner, request: request(100_000) });
    expect((await recordPayout(ledger, limits, { owner, request: request(500_000, { currency: 'EUR' }) })).created).toBe(true);
    await expect(recordPayout(ledger, limits, { owner, request: request(1) })).rejects.toMatchObject({ extensions: { remainingInMinor: 0 } });

    expect(await ledger.transition(declined.record.transactionId, PENDING_SUBMISSION, DECLINED)).toMatchObject({ status: DECLINED });
    expect(await ledger.transition(expired.record.transactionId, PENDING_SUBMISSION, EXPIRED)).toMatchObject({ status: EXPIRED });
    const stamps = { authorisedAt: null, submittedAt: null, settledAt: null, rejectedAt: null };
    await ledger.confirm(failed.record.transactionId, { ...failed.record.request, ...stamps, status: 'failed', failedAt: new Date(clock).toISOString() });
    await expect(recordPayout(ledger, limits, { owner, request: request(300_001) })).rejects.toMatchObject({
      extensions: { limit: 'user-daily', remainingInMinor: 300_000 },
    });
    expect((await recordPayout(ledger, limits, { owner, request: request(300_000) })).created).toBe(true);
    await expect(recordPayout(ledger, limits, { owner, request: request(1) })).rejects.toMatchObject({ extensions: { remainingInMinor: 0 } });
    // The first payout leaves the window: its 100 000 may be paid again.
    clock += 2_000;
    expect((await recordPayout(ledger, limits, { owner, request: request(100_000) })).created).toBe(true);
    await expect(recordPayout(ledger, limits, { owner, request: request(1) })).rejects.toBeInstanceOf(PayoutLimitExceededError);
  });

  it('refuses a single payout above the maximum for everyone, and keeps a user’s large payout for approval', async () => {
    const ledger = new PayoutStore(first, now);
    const policy = { ...POLICY, payoutApprovalAboveMinor: 50_000 };
    const merchant: PayoutOwner = { kind: 'merchant', keyId: `merchant-${randomUUID()}` };
    await expect(recordPayout(ledger, policy, { owner: merchant, request: request(100_001) })).rejects.toMatchObject({
      extensions: { code: 'PAYOUT_LIMIT_EXCEEDED', limit: 'per-payout', remainingInMinor: 100_000 },
    });
    expect((await recordPayout(ledger, policy, { owner: merchant, request: request(60_000) })).record.status).toBe(PENDING_SUBMISSION);
    const large = await recordPayout(ledger, policy, { owner: user(), request: request(60_000) });
    expect(large.record.status).toBe(AWAITING_APPROVAL);
    expect(await ledger.claim(large.record.transactionId, 'someone', 60_000, DAY_MS)).toBe(false);
  });

  it('gives a submission claim to one instance at a time, never past expiry, and expires nothing under a claim', async () => {
    const ledger = new PayoutStore(first, now);
    const { record } = await recordPayout(ledger, POLICY, { owner: user(), request: request(10) });
    const claims = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        new PayoutStore(index % 2 ? second : first, now).claim(record.transactionId, `claimant-${index}`, 60_000, DAY_MS),
      ),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await ledger.transition(record.transactionId, PENDING_SUBMISSION, EXPIRED)).toBeUndefined();
    clock += 60_000;
    expect(await ledger.claim(record.transactionId, 'late', 60_000, 30_000)).toBe(false);
    expect(await ledger.transition(record.transactionId, PENDING_SUBMISSION, EXPIRED)).toMatchObject({ status: EXPIRED });
    expect(await ledger.claim(record.transactionId, 'later', 60_000, DAY_MS)).toBe(false);
  });

  it('keeps a claim its claimant renews, lets one nobody renews lapse to another instance, and renews no one else’s', async () => {
    const ledger = new PayoutStore(first, now);
    const other = new PayoutStore(second, now);
    const { record } = await recordPayout(ledger, POLICY, { owner: user(), request: request(10) });
    expect(await ledger.claim(record.transactionId, 'alive', 5_000, DAY_MS)).toBe(true);
    clock += 4_000;
    expect(await ledger.renewClaim(record.transactionId, 'alive', 5_000)).toBe(true);
    expect(await other.renewClaim(record.transactionId, 'intruder', 5_000)).toBe(false);
    clock += 4_000;
    expect(await other.claim(record.transactionId, 'retry', 5_000, DAY_MS)).toBe(false);
    // The claimant stops renewing (its instance is gone): the claim lapses at its hold.
    clock += 1_000;
    expect(await other.claim(record.transactionId, 'retry', 5_000, DAY_MS)).toBe(true);
    expect(await ledger.renewClaim(record.transactionId, 'alive', 5_000)).toBe(false);
  });

  it('keeps a conflict in the user’s and the IBAN’s 24-hour sums, and no later answer or move takes it out of conflict', async () => {
    const ledger = new PayoutStore(first, now);
    const owner = user();
    const iban = `GB${randomUUID().replace(/-/g, '').slice(0, 20).toUpperCase()}`;
    const { record } = await recordPayout(ledger, POLICY, { owner, request: request(30_000, { beneficiaryIban: iban }) });
    expect(await ledger.claim(record.transactionId, 'sender', 5_000, DAY_MS)).toBe(true);
    expect(await ledger.markConflict(record.transactionId, 'PAYOUT_CONFLICT')).toMatchObject({ status: CONFLICT, lastError: { code: 'PAYOUT_CONFLICT' } });
    expect(await ledger.markConflict(record.transactionId, 'PAYOUT_CONFLICT')).toBeUndefined();
    expect(await ledger.claim(record.transactionId, 'again', 5_000, DAY_MS)).toBe(false);
    expect(await ledger.transition(record.transactionId, PENDING_SUBMISSION, EXPIRED)).toBeUndefined();
    const stamps = { authorisedAt: null, submittedAt: null, settledAt: null, rejectedAt: null, failedAt: null };
    await ledger.confirm(record.transactionId, { ...record.request, ...stamps, status: 'authorised' });
    await ledger.remove(record.transactionId);
    expect(await ledger.get(record.transactionId)).toMatchObject({ status: CONFLICT });
    const totals = await first.db
      .transaction()
      .execute(async (trx) => [await ledger.dailyTotal(trx, owner, 'GBP', clock), await ledger.beneficiaryTotal(trx, iban, 'GBP', clock)]);
    expect(totals).toEqual([30_000, 30_000]);
  });

  it('approves a waiting payout only while its user is not revoked, its beneficiary verified and the limits hold, and expires it after', async () => {
    const ledger = new PayoutStore(first, now);
    const beneficiaries = new BeneficiaryLedger(second);
    const policy = { ...POLICY, payoutApprovalAboveMinor: 0, payoutBeneficiaryDailyMaxMinor: 500_000 };
    const iban = `GB${randomUUID().replace(/-/g, '').slice(0, 20).toUpperCase()}`;
    const userId = `user-${randomUUID()}`;
    const owner: PayoutOwner = { kind: 'user', userId };
    await first.db.insertInto('users').values({ id: userId, issuer: null, subject: null, createdAtMs: clock, revokedAtMs: null }).execute();
    const verify = (name: string) => beneficiaries.recordVerified(userId, [{ iban, name, verifiedAt: new Date(clock).toISOString() }]);
    await verify('John Doe');
    const waiting = async () => (await recordPayout(ledger, policy, { owner, request: request(100_000, { beneficiaryIban: iban }) })).record;

    // The bank now reports another holder for the IBAN: the verification the payout relied on is gone.
    const renamed = await waiting();
    await verify('Jane Roe');
    await expect(approveAwaiting(ledger, policy, beneficiaries, renamed.transactionId, DAY_MS)).rejects.toBeInstanceOf(BeneficiaryNotVerifiedError);
    await verify('John Doe');
    expect(await approveAwaiting(ledger, policy, beneficiaries, renamed.transactionId, DAY_MS)).toMatchObject({
      kind: 'approved',
      record: { status: PENDING_SUBMISSION },
    });

    // A day later it has left the window, and other users have filled the IBAN's cap since.
    const overdue = await waiting();
    clock += DAY_MS;
    for (let index = 0; index < 5; index += 1) {
      await recordPayout(ledger, policy, { owner: user(), request: request(100_000, { beneficiaryIban: iban }) });
    }
    await expect(approveAwaiting(ledger, policy, beneficiaries, overdue.transactionId, 3 * DAY_MS)).rejects.toMatchObject({
      extensions: { limit: 'beneficiary-daily', remainingInMinor: 0 },
    });
    expect(await ledger.get(overdue.transactionId)).toMatchObject({ status: AWAITING_APPROVAL });

    await first.db.updateTable('users').set({ revokedAtMs: clock }).where('id', '=', userId).execute();
    await expect(approveAwaiting(ledger, policy, beneficiaries, overdue.transactionId, 3 * DAY_MS)).rejects.toBeInstanceOf(ForbiddenError);

    clock += 2 * DAY_MS;
    expect(await approveAwaiting(ledger, policy, beneficiaries, overdue.transactionId, 3 * DAY_MS)).toMatchObject({
      kind: 'expired',
      record: { status: EXPIRED },
    });
    expect(await approveAwaiting(ledger, policy, beneficiaries, overdue.transactionId, 3 * DAY_MS)).toEqual({ kind: 'not-awaiting' });
  });

  it('keeps one verified beneficiary per user and IBAN, visible from every instance', async () => {
    const userId = `user-${randomUUID()}`;
    const iban = `GB${randomUUID().replace(/-/g, '').slice(0, 20).toUpperCase()}`;
    await new BeneficiaryLedger(first).recordVerified(userId, [{ iban, name: 'John Doe', verifiedAt: '2026-01-01T00:00:00.000Z' }]);
    await new BeneficiaryLedger(second).recordVerified(userId, [{ iban, name: 'John A Doe', verifiedAt: '2026-01-02T00:00:00.000Z' }]);
    expect(await new BeneficiaryLedger(first).listForUser(userId)).toEqual([{ iban, name: 'John A Doe', verifiedAt: '2026-01-02T00:00:00.000Z' }]);
    expect(await new BeneficiaryLedger(second).holdersOf(iban)).toEqual([{ userId, name: 'John A Doe', verifiedAt: '2026-01-02T00:00:00.000Z' }]);
  });
});
