import type { PaymentsClient } from '../../../src/platform/provider/payments.client';
import type { PayoutClient } from '../../../src/platform/provider/payout.client';
import type { ProviderRefund, ProviderWithdrawal } from '../../../src/platform/provider/provider-types';
import { createLogger } from '../../../src/platform/observability/logger';
import { MemoryEventBus } from '../../../src/platform/live/event-bus';
import { InProcessLeases, type Leases } from '../../../src/platform/scheduler/lease';
import { payoutWatchers } from '../../helpers/payout-watch';
import { refundWatch } from '../../../src/refunds/refund-watch.job';
import { StatusWatchers } from '../../../src/platform/scheduler/status-watcher';
import { topics } from '../../../src/platform/live/topics';
import type { RefundEvent } from '../../../src/refunds/refund.model';

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

const PAYMENT = '3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b';

function refund(id: string, status: string): ProviderRefund {
  return { id, amount_in_minor: 100, currency: 'GBP', status, reference: 'ref', created_at: '2024-05-01T10:00:00Z' };
}

// Fake timers: the watch schedule runs exactly as far as each test advances it, and "no more reads" is exact.
let watchers: ReturnType<typeof payoutWatchers> | StatusWatchers<ProviderRefund[]> | undefined;

beforeEach(() => {
  jest.useFakeTimers();
});

afterEach(async () => {
  await watchers?.close();
  watchers = undefined;
  jest.useRealTimers();
});

const advance = (ms: number): Promise<void> => jest.advanceTimersByTimeAsync(ms);

describe('PayoutWatchers', () => {
  let status: string;
  let reads: number[];
  let published: string[];
  let bus: MemoryEventBus;
  const client = {
    getWithdrawal: async () => {
      reads.push(Date.now());
      return withdrawal(status);
    },
  } as unknown as PayoutClient;

  beforeEach(async () => {
    status = 'authorised';
    reads = [];
    published = [];
    bus = new MemoryEventBus(logger);
    await bus.listen(topics.payout(ID), (payload) => published.push((payload as ProviderWithdrawal).status));
  });

  it('reads once per payout however many subscribers, publishes changes only, and stops at a final status', async () => {
    watchers = payoutWatchers(client, { bus, leases: new InProcessLeases(), logger }, SETTINGS);
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
    watchers = payoutWatchers(client, { bus, leases: new InProcessLeases(), logger }, SETTINGS);
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
    watchers = payoutWatchers(client, { bus, leases, logger }, SETTINGS);
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
    expect(() => payoutWatchers(client, { bus, leases: new InProcessLeases(), logger }, { ...SETTINGS, leaseTtlMs: 80 })).toThrow('leaseTtlMs');
  });
});

describe('the refund watch', () => {
  let refunds: ProviderRefund[];
  let reads: number;
  let published: string[];
  let bus: MemoryEventBus;
  const payments = {
    listRefunds: async () => {
      reads += 1;
      return refunds.map((item) => ({ ...item }));
    },
  } as unknown as PaymentsClient;

  beforeEach(async () => {
    refunds = [refund('r1', 'pending')];
    reads = 0;
    published = [];
    bus = new MemoryEventBus(logger);
    await bus.listen(topics.refund(PAYMENT), (payload) => {
      const event = payload as RefundEvent;
      published.push(`${event.refund.id} ${event.refund.status}`);
    });
  });

  it('publishes each refund that moved short of its end, backs off while none does, and rests once every refund is final', async () => {
    watchers = new StatusWatchers(refundWatch(payments, topics.refund), { bus, leases: new InProcessLeases(), logger }, SETTINGS);
    const release = watchers.watch(PAYMENT);
    // Reads at 10 ms (a change: nothing was known), then 10, 20, 40 ms apart while nothing changes; each
    // publication lands a moment after its read.
    await advance(11);
    expect(published).toEqual(['r1 pending']);
    await advance(10 + 20 + 40);
    expect(reads).toBe(4);
    expect(published).toEqual(['r1 pending']);

    refunds = [refund('r1', 'authorized'), refund('r2', 'pending')];
    await advance(82);
    expect(published).toEqual(['r1 pending', 'r1 authorized', 'r2 pending']);
    // The ends are their webhooks' to announce: the pass only sees that nothing is left to watch.
    refunds = [refund('r1', 'executed'), refund('r2', 'failed')];
    await advance(20);
    expect(published).toEqual(['r1 pending', 'r1 authorized', 'r2 pending']);
    expect(watchers.isPolling(PAYMENT)).toBe(false);
    const readsAtRest = reads;
    await advance(1_000);
    expect(reads).toBe(readsAtRest);
    release();
    expect(watchers.watched).toEqual([]);
    // Gone with its last subscriber, it no longer listens either: a new refund's event wakes nothing.
    expect(bus.listenedTopics).toEqual([topics.refund(PAYMENT)]);
    void bus.publish(topics.refund(PAYMENT), { paymentId: PAYMENT, refund: refund('r3', 'pending') } satisfies RefundEvent);
    await advance(1_000);
    expect(reads).toBe(readsAtRest);
  });

  it('starts a resting watch again when an event shows a refund that is not final, and not for a final one', async () => {
    refunds = [refund('r1', 'executed')];
    watchers = new StatusWatchers(refundWatch(payments, topics.refund), { bus, leases: new InProcessLeases(), logger }, SETTINGS);
    watchers.watch(PAYMENT);
    await advance(11);
    expect(reads).toBe(1);
    expect(watchers.isPolling(PAYMENT)).toBe(false);

    void bus.publish(topics.refund(PAYMENT), { paymentId: PAYMENT, refund: refund('r1', 'executed') } satisfies RefundEvent);
    await advance(1_000);
    expect(reads).toBe(1);

    // A refund made on some instance: its PENDING event wakes the pass, which then sees it authorized.
    refunds = [refund('r1', 'executed'), refund('r2', 'authorized')];
    void bus.publish(topics.refund(PAYMENT), { paymentId: PAYMENT, refund: refund('r2', 'pending') } satisfies RefundEvent);
    await advance(12);
    expect(reads).toBe(2);
    expect(published.slice(-1)).toEqual(['r2 authorized']);
    expect(watchers.isPolling(PAYMENT)).toBe(true);
  });

  it('does not publish again what an event already announced, nor learn from a late one', async () => {
    watchers = new StatusWatchers(refundWatch(payments, topics.refund), { bus, leases: new InProcessLeases(), logger }, SETTINGS);
    watchers.watch(PAYMENT);
    await advance(11);
    expect(published).toEqual(['r1 pending']);

    // A refund made through some instance, published by it; then the pass reads it as it was announced.
    refunds = [refund('r1', 'pending'), refund('r2', 'authorized')];
    void bus.publish(topics.refund(PAYMENT), { paymentId: PAYMENT, refund: refund('r2', 'authorized') } satisfies RefundEvent);
    const readsBefore = reads;
    await advance(200);
    expect(reads).toBeGreaterThan(readsBefore);
    expect(published).toEqual(['r1 pending', 'r2 authorized']);

    // A PENDING of r2 arriving late does not make the pass announce AUTHORIZED again.
    void bus.publish(topics.refund(PAYMENT), { paymentId: PAYMENT, refund: refund('r2', 'pending') } satisfies RefundEvent);
    await advance(200);
    expect(published).toEqual(['r1 pending', 'r2 authorized', 'r2 pending']);
  });

  it('does not rest on a read that was answered before a new refund was announced', async () => {
    refunds = [refund('r1', 'executed')];
    let answer: (() => void) | undefined;
    const slow = {
      listRefunds: async () => {
        reads += 1;
        const seen = refunds.map((item) => ({ ...item }));
        await new Promise<void>((resolve) => (answer = resolve));
        return seen;
      },
    } as unknown as PaymentsClient;
    watchers = new StatusWatchers(refundWatch(slow, topics.refund), { bus, leases: new InProcessLeases(), logger }, SETTINGS);
    watchers.watch(PAYMENT);
    await advance(10);
    expect(reads).toBe(1);

    // While that read (every refund final) is under way, a refund is made and announced.
    refunds = [refund('r1', 'executed'), refund('r2', 'authorized')];
    void bus.publish(topics.refund(PAYMENT), { paymentId: PAYMENT, refund: refund('r2', 'pending') } satisfies RefundEvent);
    await advance(1);
    answer!();
    await advance(11);
    expect(reads).toBe(2);
    answer!();
    await advance(1);
    expect(published).toEqual(['r2 pending', 'r2 authorized']);
  });
});
