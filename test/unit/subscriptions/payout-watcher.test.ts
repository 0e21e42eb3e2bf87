import type { PayoutClient } from '../../../src/datasources/payout.client';
import type { ProviderWithdrawal } from '../../../src/datasources/provider-types';
import { createLogger } from '../../../src/logger';
import { MemoryEventBus } from '../../../src/subscriptions/event-bus';
import { InProcessLeases, type Leases } from '../../../src/subscriptions/lease';
import { PayoutWatchers } from '../../../src/subscriptions/payout-watcher';
import { topics } from '../../../src/subscriptions/topics';

const logger = createLogger('silent');
const ID = '8d7c1b52-3f7e-4a6b-9c1d-2e3f4a5b6c7d';
const SETTINGS = { initialDelayMs: 10, maxDelayMs: 80, factor: 2, leaseTtlMs: 300 };

function withdrawal(status: string): ProviderWithdrawal {
  return {
    transaction_id: ID,
    authorised_at: '2024-05-01T10:00:00Z',
    submitted_at: status === 'authorised' ? null : '2024-05-01T10:00:05Z',
    settled_at: status === 'settled' ? '2024-05-01T10:00:35Z' : null,
    rejected_at: null,
    failed_at: null,
    beneficiary_name: 'Jane Roe',
    beneficiary_iban: 'GB29NWBK60161331926819',
    beneficiary_reference: 'ref',
    amount_in_minor: 100,
    currency: 'GBP',
    status,
    context_code: 'withdrawal',
  };
}

describe('PayoutWatchers', () => {
  let status: string;
  let reads: number[];
  let published: string[];
  let bus: MemoryEventBus;
  let watchers: PayoutWatchers | undefined;
  const client = {
    getWithdrawal: async () => {
      reads.push(Date.now());
      return withdrawal(status);
    },
  } as unknown as PayoutClient;

  beforeEach(async () => {
    // Fake timers: the watch schedule runs exactly as far as each test advances it, and "no more reads" is exact.
    jest.useFakeTimers();
    status = 'authorised';
    reads = [];
    published = [];
    bus = new MemoryEventBus(logger);
    await bus.listen(topics.payout(ID), (payload) => published.push((payload as ProviderWithdrawal).status));
  });

  afterEach(async () => {
    await watchers?.close();
    jest.useRealTimers();
  });

  const advance = (ms: number): Promise<void> => jest.advanceTimersByTimeAsync(ms);

  it('reads once per payout however many subscribers, publishes changes only, and stops at a final status', async () => {
    watchers = new PayoutWatchers(client, bus, new InProcessLeases(), logger, SETTINGS);
    const releaseOne = watchers.watch(ID);
    const releaseTwo = watchers.watch(ID);
    expect(watchers.watched).toEqual([ID]);
    // The first read (a change: nothing was known) starts the schedule; then reads back off 10, 20, 40, 80 ms apart,
    // 80 at most, while nothing changes.
    await advance(10);
    expect(reads).toHaveLength(1);
    await advance(220);
    expect(reads).toHaveLength(5);
    expect(reads.slice(1).map((at, index) => Math.round((at - reads[index]!) / 10) * 10)).toEqual([10, 20, 40, 80]);
    expect(published).toEqual(['authorised']);

    status = 'submitted';
    await advance(80);
    expect(published).toEqual(['authorised', 'submitted']);
    status = 'settled';
    await advance(80);
    expect(published).toEqual(['authorised', 'submitted', 'settled']);
    expect(watchers.isPolling(ID)).toBe(false);
    const readsAtEnd = reads.length;
    await advance(1_000);
    expect(reads).toHaveLength(readsAtEnd);
    releaseOne();
    expect(watchers.watched).toEqual([ID]);
    releaseTwo();
    releaseTwo();
    expect(watchers.watched).toEqual([]);
  });

  it('stops reading when the last subscriber leaves', async () => {
    watchers = new PayoutWatchers(client, bus, new InProcessLeases(), logger, SETTINGS);
    const release = watchers.watch(ID);
    await advance(10);
    expect(reads).toHaveLength(1);
    release();
    await advance(1_000);
    expect(reads).toHaveLength(1);
  });

  it('only listens while another instance holds the lease, and takes over when it is free', async () => {
    let free = false;
    const holds: string[] = [];
    const leases: Leases = {
      hold: async (name) => {
        holds.push(name);
        return free;
      },
      release: async () => undefined,
    };
    watchers = new PayoutWatchers(client, bus, leases, logger, SETTINGS);
    watchers.watch(ID);
    // Not the holder: it tries again every leaseTtlMs/3 (100 ms), and never reads.
    await advance(10 + 100);
    expect(holds).toEqual([`payout:${ID}`, `payout:${ID}`]);
    expect(reads).toEqual([]);
    expect(watchers.isPolling(ID)).toBe(false);
    free = true;
    await advance(100);
    expect(reads).toHaveLength(1);
    expect(watchers.isPolling(ID)).toBe(true);
  });

  it('refuses a lease shorter than the longest gap between reads', () => {
    expect(() => new PayoutWatchers(client, bus, new InProcessLeases(), logger, { ...SETTINGS, leaseTtlMs: 80 })).toThrow('leaseTtlMs');
  });
});
