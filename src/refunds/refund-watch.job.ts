import type { PaymentsClient } from '../platform/provider/payments.client';
import type { ProviderRefund } from '../platform/provider/provider-types';
import type { WatchedStatus } from '../platform/scheduler/status-watcher';
import { refundLifecycle, refundStatusOf, type RefundEvent } from './refund.model';

/** How far along a provider's refund status is; undefined for a word the gateway does not know. */
function rankOf(word: string): number | undefined {
  const status = refundStatusOf(word);
  return status === undefined ? undefined : refundLifecycle.rank(status);
}

/** The ends, announced by their webhooks. */
function isFinal(word: string): boolean {
  const status = refundStatusOf(word);
  return status !== undefined && refundLifecycle.isFinal(status);
}

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
    if (typeof refund?.id !== 'string' || rankOf(refund.status) === undefined) return last;
    const known = last?.find((item) => item.id === refund.id);
    if (known === undefined) return [...(last ?? []), refund];
    // A late event (a state older than one already read) teaches nothing.
    if ((rankOf(known.status) ?? -1) >= rankOf(refund.status)!) return last;
    return last!.map((item) => (item === known ? refund : item));
  },
  wakes(payload) {
    const status = (payload as RefundEvent | undefined)?.refund?.status;
    return typeof status === 'string' && rankOf(status) !== undefined && !isFinal(status);
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
