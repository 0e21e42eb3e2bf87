import type { PaymentsClient } from '../../../src/datasources/payments.client';
import type { ProviderRefund } from '../../../src/datasources/provider-types';
import { createLogger } from '../../../src/logger';
import { MemoryEventBus } from '../../../src/subscriptions/event-bus';
import { InProcessLeases } from '../../../src/subscriptions/lease';
import { RefundWatchers } from '../../../src/subscriptions/refund-watcher';
import { topics } from '../../../src/subscriptions/topics';
import type { RefundEvent } from '../../../src/subscriptions/webhook.handlers';

const logger = createLogger('silent');
const PAYMENT = '3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b';
const SETTINGS = { initialDelayMs: 10, maxDelayMs: 80, factor: 2, leaseTtlMs: 300 };

function refund(id: string, status: string): ProviderRefund {
  return { id, amount_in_minor: 100, currency: 'GBP', status, reference: 'ref', created_at: '2024-05-01T10:00:00Z' };
}

describe('RefundWatchers', () => {
  let refunds: ProviderRefund[];
  let reads: number;
  let published: string[];
  let bus: MemoryEventBus;
  let watchers: RefundWatchers | undefined;
  const payments = {
    listRefunds: async () => {
      reads += 1;
      return refunds.map((item) => ({ ...item }));
    },
  } as unknown as PaymentsClient;

  beforeEach(async () => {
    jest.useFakeTimers();
    refunds = [refund('r1', 'pending')];
    reads = 0;
    published = [];
    bus = new MemoryEventBus(logger);
    await bus.listen(topics.refund(PAYMENT), (payload) => {
      const event = payload as RefundEvent;
      published.push(`${event.refund.id} ${event.refund.status}`);
    });
  });

  afterEach(async () => {
    await watchers?.close();
    jest.useRealTimers();
  });

  const advance = (ms: number): Promise<void> => jest.advanceTimersByTimeAsync(ms);

  it('publishes each refund whose status changed, backs off while none does, and rests once every refund is final', async () => {
    watchers = new RefundWatchers(payments, bus, new InProcessLeases(), logger, SETTINGS);
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
    refunds = [refund('r1', 'executed'), refund('r2', 'failed')];
    await advance(20);
    expect(published).toEqual(['r1 pending', 'r1 authorized', 'r2 pending', 'r1 executed', 'r2 failed']);
    expect(watchers.isPolling(PAYMENT)).toBe(false);
    const readsAtRest = reads;
    await advance(1_000);
    expect(reads).toBe(readsAtRest);
    release();
    expect(watchers.watched).toEqual([]);
  });

  it('starts a resting watch again when an event shows a refund that is not final, and not for a final one', async () => {
    refunds = [refund('r1', 'executed')];
    watchers = new RefundWatchers(payments, bus, new InProcessLeases(), logger, SETTINGS);
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

  it('stops reading and listening when the last subscriber leaves', async () => {
    watchers = new RefundWatchers(payments, bus, new InProcessLeases(), logger, SETTINGS);
    const release = watchers.watch(PAYMENT);
    await advance(10);
    expect(reads).toBe(1);
    release();
    await advance(1_000);
    expect(reads).toBe(1);
    expect(bus.listenedTopics).toEqual([topics.refund(PAYMENT)]);
    void bus.publish(topics.refund(PAYMENT), { paymentId: PAYMENT, refund: refund('r3', 'pending') } satisfies RefundEvent);
    await advance(1_000);
    expect(reads).toBe(1);
  });
});
