import type { PaymentsClient } from '../platform/provider/payments.client';
import type { ProviderRefund } from '../platform/provider/provider-types';
import type { WatchedStatus } from '../platform/scheduler/status-watcher';
import type { RefundEvent } from './refund.model';

/** How far along a refund status is; the ends (announced by their webhooks) are the furthest. */
const REFUND_STAGES: Readonly<Record<string, number>> = { pending: 0, authorized: 1, executed: 2, failed: 2 };

const isFinal = (status: string): boolean => REFUND_STAGES[status] === 2;

const REFUND_STATUS: Omit<WatchedStatus<ProviderRefund[]>, 'read' | 'topic'> = {
  kind: 'refund',
  idField: 'paymentId',
  // Only what nothing else announces: a refund's end has its webhook, and a refund made through bankgraph is
  // published by the instance that made it (and heard here); the pass reports authorizations, and refunds it
  // finds that no one announced.
  changes(paymentId, refunds, previous): RefundEvent[] {
    const before = new Map(previous?.map((refund) => [refund.id, refund.status]));
    return refunds.filter((refund) => !isFinal(refund.status) && before.get(refund.id) !== refund.status).map((refund) => ({ paymentId, refund }));
  },
  isFinal: (refunds) => refunds.every((refund) => isFinal(refund.status)),
  heard(last, payload) {
    const refund = (payload as RefundEvent | undefined)?.refund;
    if (typeof refund?.id !== 'string' || REFUND_STAGES[refund.status] === undefined) return last;
    const known = last?.find((item) => item.id === refund.id);
    if (known === undefined) return [...(last ?? []), refund];
    // A late event (a state older than one already read) teaches nothing.
    if ((REFUND_STAGES[known.status] ?? -1) >= REFUND_STAGES[refund.status]!) return last;
    return last!.map((item) => (item === known ? refund : item));
  },
  wakes(payload) {
    const status = (payload as RefundEvent | undefined)?.refund?.status;
    return typeof status === 'string' && REFUND_STAGES[status] !== undefined && !isFinal(status);
  },
};

/**
 * The refund watcher: the provider sends refund webhooks only for the end (executed, failed), so a refund's
 * authorization is seen by reading GET /v3/payments/{id}/refunds while anyone watches the payment's refunds (the
 * scheduler's watches: one reader across instances, backing off while nothing changes). Each refund not yet final
 * whose status differs from what was last read or heard is published as a RefundEvent; the watch rests once every
 * refund of the payment is final, and starts again when an event shows one that is not (a refund just made, on any
 * instance). `topic` is refundUpdated's, where the events are published and heard.
 */
export function refundWatch(payments: Pick<PaymentsClient, 'listRefunds'>, topic: (paymentId: string) => string): WatchedStatus<ProviderRefund[]> {
  return { ...REFUND_STATUS, topic, read: (paymentId) => payments.listRefunds(paymentId) };
}
