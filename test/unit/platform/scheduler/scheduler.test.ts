import { createLogger } from '../../../../src/platform/observability/logger';
import { MemoryEventBus } from '../../../../src/platform/live/event-bus';
import { topics } from '../../../../src/platform/live/topics';
import { InProcessLeases, type Leases } from '../../../../src/platform/scheduler/lease';
import { Scheduler, type PassJob } from '../../../../src/platform/scheduler/scheduler';
import { PayoutService, payoutWatch, type PayoutStore, type PayoutRecord } from '../../../../src/payouts';
import type { MoneyConfig } from '../../../../src/platform/config/config';
import type { PayoutClient } from '../../../../src/platform/provider/payout.client';
import type { ProviderWithdrawal } from '../../../../src/platform/provider/provider-types';
import type { ConfirmedPayout } from '../../../../src/payouts/payout.model';
import { toWithdrawalRequest } from '../../../../src/payouts/payout-provider.adapter';
import { waitFor } from '../../../helpers/wait-for';

const logger = createLogger('silent');
const ID = '8d7c1b52-3f7e-4a6b-9c1d-2e3f4a5b6c7d';

function scheduler(passLeases: Leases, counts: { passes: string[]; repairs: string[] }): Scheduler {
  return new Scheduler(
    {
      passLeases,
      watches: { bus: new MemoryEventBus(logger), leases: new InProcessLeases(), logger },
      logger,
      onPass: (outcome) => counts.passes.push(outcome),
      onRepair: (kind) => counts.repairs.push(kind),
    },
    { intervalMs: 60_000 },
  );
}

describe('Scheduler', () => {
  it('runs every pass in order while it holds the lease, counts each run and repair, and runs none without it', async () => {
    let free = true;
    const leases: Leases = { hold: async () => free, release: async () => undefined };
    const counts = { passes: [] as string[], repairs: [] as string[] };
    const ran: string[] = [];
    const pass = (name: string): PassJob => ({
      name,
      run: async (run) => {
        ran.push(name);
        run.repaired(`${name}_fixed`);
      },
    });
    const jobs = scheduler(leases, counts);
    jobs.addPass(pass('first'));
    jobs.addPass(pass('second'));
    expect(await jobs.runOnce()).toBe(true);
    expect(ran).toEqual(['first', 'second']);
    expect(counts).toEqual({ passes: ['ok'], repairs: ['first_fixed', 'second_fixed'] });
    free = false;
    expect(await jobs.runOnce()).toBe(false);
    expect(ran).toEqual(['first', 'second']);
    await jobs.close();
  });

  it('counts a failed run as an error and stops the passes after the one that failed', async () => {
    const counts = { passes: [] as string[], repairs: [] as string[] };
    const jobs = scheduler(new InProcessLeases(), counts);
    const ran: string[] = [];
    jobs.addPass({ name: 'broken', run: async () => Promise.reject(new Error('down')) });
    jobs.addPass({ name: 'after', run: async () => void ran.push('after') });
    await expect(jobs.runOnce()).rejects.toThrow('down');
    expect(ran).toEqual([]);
    expect(counts.passes).toEqual(['error']);
    await jobs.close();
  });

  it('stores a watched payout’s move in the ledger before its watch publishes it', async () => {
    const events: string[] = [];
    let stored: PayoutRecord = {
      transactionId: ID,
      owner: { kind: 'user', userId: 'u1' },
      request: {
        transactionId: ID,
        beneficiaryName: 'Jane Roe',
        beneficiaryIban: 'GB29NWBK60161331926819',
        beneficiaryReference: 'ref',
        currency: 'GBP',
        amountInMinor: 100,
        contextCode: 'withdrawal',
      },
      status: 'authorised',
      createdAtMs: 0,
      updatedAtMs: 0,
      queuedAtMs: 0,
    };
    const live: ProviderWithdrawal = {
      ...toWithdrawalRequest(stored.request),
      status: 'submitted',
      authorised_at: '2024-05-01T10:00:00Z',
      submitted_at: '2024-05-01T10:00:05Z',
      settled_at: null,
      rejected_at: null,
      failed_at: null,
    };
    const ledger = {
      get: async () => stored,
      confirm: async (_id: string, confirmed: ConfirmedPayout) => {
        events.push(`stored ${confirmed.status}`);
        stored = { ...stored, status: confirmed.status, confirmed };
        return stored;
      },
    } as unknown as PayoutStore;
    const payouts = new PayoutService({
      provider: { getWithdrawal: async () => live } as unknown as PayoutClient,
      ledger,
      beneficiaries: { findForUser: async () => undefined, holdersOf: async () => [] },
      events: { publish: async () => undefined },
      clock: Date.now,
      logger,
      settings: {} as MoneyConfig,
    });
    const bus = new MemoryEventBus(logger);
    await bus.listen(topics.payout(ID), (payload) => events.push(`published ${(payload as ProviderWithdrawal).status}`));
    const jobs = new Scheduler({ passLeases: new InProcessLeases(), watches: { bus, leases: new InProcessLeases(), logger }, logger }, { intervalMs: 60_000 });
    const watchers = jobs.watches(payoutWatch(payouts, topics.payout), { initialDelayMs: 1, maxDelayMs: 10, factor: 2, leaseTtlMs: 100 });
    const release = watchers.watch(ID);
    await waitFor(() => (events.length >= 2 ? true : undefined), 'the watch to read and publish');
    release();
    await jobs.close();
    expect(events.slice(0, 2)).toEqual(['stored submitted', 'published submitted']);
    expect(stored.status).toBe('submitted');
  });
});
