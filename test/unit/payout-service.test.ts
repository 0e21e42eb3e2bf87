import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { PayoutService } from '../../src/payouts/payout.service';
import { PayoutStore } from '../../src/payouts/payout.store';
import { toWithdrawalRequest } from '../../src/payouts/payout-provider.adapter';
import { busClaimSignals } from '../../src/payouts/payout.stream';
import { MemoryEventBus } from '../../src/platform/live/event-bus';
import type { PayoutOwner, PayoutRequest, PayoutView } from '../../src/payouts/payout.model';
import { AWAITING_APPROVAL } from '../../src/payouts/payout-status';
import { openDatabase, type Database } from '../../src/platform/db/database';
import { BadUserInputError, NotFoundError } from '../../src/platform/errors/gateway-errors';
import type { MoneyConfig } from '../../src/platform/config/config';
import type { Logger } from '../../src/platform/observability/logger';
import type { ProviderWithdrawal, ProviderWithdrawalRequest } from '../../src/platform/provider/provider-types';

const SETTINGS = {
  payoutMaxMinor: 100_000,
  payoutDailyMaxMinor: 500_000,
  payoutBeneficiaryDailyMaxMinor: 1_000_000,
  payoutApprovalAboveMinor: 50_000,
  payoutApprovalExpiryMs: 24 * 60 * 60 * 1000,
  payoutSubmissionExpiryMs: 60 * 60 * 1000,
} as MoneyConfig;
const IBAN = 'GB33BUKB20201555555555';

/** The provider's withdrawals, held as the sandbox holds them: one per transaction id, answered again on a repeat. */
function fakeProvider() {
  const held = new Map<string, ProviderWithdrawal>();
  const sent: ProviderWithdrawalRequest[] = [];
  let refuse: Error | undefined;
  return {
    sent,
    held,
    refuseNext(error: Error) {
      refuse = error;
    },
    createWithdrawal: jest.fn(async (request: ProviderWithdrawalRequest) => {
      sent.push(request);
      if (refuse) {
        const error = refuse;
        refuse = undefined;
        throw error;
      }
      const withdrawal = held.get(request.transaction_id) ?? {
        ...request,
        status: 'authorised',
        authorised_at: '2026-01-01T00:00:00.000Z',
        submitted_at: null,
        settled_at: null,
        rejected_at: null,
        failed_at: null,
      };
      held.set(request.transaction_id, withdrawal);
      return withdrawal;
    }),
    getWithdrawal: jest.fn(async (transactionId: string) => {
      const withdrawal = held.get(transactionId);
      if (!withdrawal) throw new NotFoundError('No withdrawal with that transaction id.');
      return withdrawal;
    }),
  };
}

describe('PayoutService, over a SQLite store and fakes of the provider, the beneficiaries and the bus', () => {
  let directory: string;
  let database: Database;
  let provider: ReturnType<typeof fakeProvider>;
  let published: PayoutView[];
  let service: PayoutService;
  const user: PayoutOwner = { kind: 'user', userId: 'user-1' };
  const merchant: PayoutOwner = { kind: 'merchant', keyId: 'key-1' };
  const logger = { info: jest.fn(), warn: jest.fn(), error: jest.fn() } as unknown as Logger;

  const request = (amountInMinor: number): PayoutRequest => ({
    transactionId: randomUUID(),
    beneficiaryName: 'John Doe',
    beneficiaryIban: IBAN,
    beneficiaryReference: 'rent',
    currency: 'GBP',
    amountInMinor,
    contextCode: 'withdrawal',
  });

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'bankgraph-payout-service-'));
    database = await openDatabase(`sqlite://${join(directory, 'store.sqlite')}`);
    await database.db.insertInto('users').values({ id: user.userId, issuer: null, subject: null, createdAtMs: Date.now(), revokedAtMs: null }).execute();
  });

  afterAll(async () => {
    await database?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  beforeEach(() => {
    provider = fakeProvider();
    published = [];
    service = new PayoutService({
      provider,
      ledger: new PayoutStore(database),
      beneficiaries: { findForUser: async () => ({ name: 'John Doe' }), holdersOf: async () => [{ name: 'John Doe' }] },
      events: { publish: async (_id, payout) => void published.push(payout) },
      clock: Date.now,
      logger,
      settings: SETTINGS,
    });
  });

  it('sends a user’s payout once, in the provider’s shape, and answers a repeat from the store without a second send', async () => {
    const payout = request(1_000);
    const answer = await service.create(user, payout, true, {});
    expect(answer).toMatchObject({ transactionId: payout.transactionId, status: 'authorised', amountInMinor: 1_000, initiatedBy: 'USER', agentName: null });
    expect(provider.sent).toEqual([
      {
        transaction_id: payout.transactionId,
        beneficiary_name: 'John Doe',
        beneficiary_iban: IBAN,
        beneficiary_reference: 'rent',
        currency: 'GBP',
        amount_in_minor: 1_000,
        context_code: 'withdrawal',
      },
    ]);
    const onRepeat = jest.fn();
    expect(await service.create(user, payout, true, {}, { onRepeat })).toEqual(answer);
    expect(onRepeat).toHaveBeenCalledTimes(1);
    expect(provider.createWithdrawal).toHaveBeenCalledTimes(1);
    await expect(service.create(user, { ...payout, amountInMinor: 2_000 }, true, {})).rejects.toMatchObject({
      extensions: { code: 'IDEMPOTENCY_CONFLICT' },
      message: expect.stringContaining('a different amountInMinor'),
    });
  });

  it('keeps an agent’s payout for approval unsent, names the agent, and sends it once a merchant approves', async () => {
    const payout = request(100);
    const proposed = await service.create(user, payout, true, {}, { agent: { clientName: 'test-agent' } });
    expect(proposed).toMatchObject({ status: AWAITING_APPROVAL, initiatedBy: 'AGENT', agentName: 'test-agent', authorisedAt: null });
    expect(provider.createWithdrawal).not.toHaveBeenCalled();
    const approved = await service.approve(payout.transactionId, {});
    expect(approved).toMatchObject({ status: 'authorised', initiatedBy: 'AGENT', agentName: 'test-agent' });
    expect(provider.createWithdrawal).toHaveBeenCalledTimes(1);
    expect(published.map((event) => [event.status, event.initiatedBy])).toEqual([
      ['pending-submission', 'AGENT'],
      ['authorised', 'AGENT'],
    ]);
  });

  it('marks a merchant key’s payout as the merchant’s, and one made at the provider directly as nobody’s it knows', async () => {
    const payout = request(90_000);
    expect(await service.create(merchant, payout, true, {})).toMatchObject({ status: 'authorised', initiatedBy: 'MERCHANT' });
    const elsewhere = request(10);
    await provider.createWithdrawal(toWithdrawalRequest(elsewhere));
    expect(await service.read(merchant, elsewhere.transactionId, {})).toMatchObject({
      transactionId: elsewhere.transactionId,
      initiatedBy: null,
      agentName: null,
    });
    expect(await service.read(user, elsewhere.transactionId, {})).toBeUndefined();
  });

  it('keeps nothing of a payout the provider refused outright', async () => {
    const payout = request(1_000);
    provider.refuseNext(new BadUserInputError('The provider refused the IBAN.', 'input.beneficiaryIban'));
    await expect(service.create(user, payout, true, {})).rejects.toBeInstanceOf(BadUserInputError);
    expect(await service.recorded(payout.transactionId)).toBeUndefined();
  });

  it('waits for a user’s payout above the approval threshold, refusing to approve or decline one that is not waiting', async () => {
    const payout = request(60_000);
    expect(await service.create(user, payout, true, {})).toMatchObject({ status: AWAITING_APPROVAL, initiatedBy: 'USER' });
    expect(await service.decline(payout.transactionId, 'not today')).toMatchObject({ status: 'declined' });
    await expect(service.approve(payout.transactionId, {})).rejects.toMatchObject({
      message: `Payout ${payout.transactionId} is declined; only a payout awaiting approval can be approved or declined.`,
    });
    await expect(service.decline(randomUUID(), 'unknown')).rejects.toBeInstanceOf(NotFoundError);
    expect(provider.createWithdrawal).not.toHaveBeenCalled();
  });
  it('wakes a request waiting on another’s submission when its claim is released instead of looking again on a timer', async () => {
    const bus = new MemoryEventBus(logger);
    const store = new PayoutStore(database);
    const signalled = new PayoutService({
      provider,
      ledger: store,
      beneficiaries: { findForUser: async () => ({ name: 'John Doe' }), holdersOf: async () => [] },
      events: { publish: async () => undefined },
      claims: busClaimSignals(bus),
      clock: Date.now,
      logger,
      settings: SETTINGS,
    });
    const payout = request(1_000);
    let letGo: () => void = () => {};
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const send = provider.createWithdrawal.getMockImplementation()!;
    provider.createWithdrawal.mockImplementationOnce(async (wire) => {
      await held;
      return send(wire);
    });
    const first = signalled.create(user, payout, true, {});
    await waitUntil(() => provider.createWithdrawal.mock.calls.length === 1);
    const reads = jest.spyOn(store, 'get');
    const second = signalled.create(user, payout, true, {});
    // The send is held for longer than a few looks on a timer would take.
    await new Promise((resolve) => setTimeout(resolve, 600));
    letGo();
    const [sent, waited] = await Promise.all([first, second]);
    expect(waited).toEqual(sent);
    expect(provider.createWithdrawal).toHaveBeenCalledTimes(1);
    // The waiter's read on arrival, before waiting and after the release, and the sender's confirmation.
    expect(reads.mock.calls.length).toBeLessThanOrEqual(4);
    await bus.close();
  });
});

async function waitUntil(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
}
