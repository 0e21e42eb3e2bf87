import type { PaymentsClient } from '../datasources/payments.client';
import type { ProviderRefund } from '../datasources/provider-types';
import { topics } from './topics';
import { StatusWatchers, type StatusWatchDeps, type StatusWatchSettings, type WatchedStatus } from './status-watcher';
import type { RefundEvent } from './webhook.handlers';

/** Statuses no refund leaves; their webhooks (refund_executed, refund_failed) announce them. */
const FINAL_REFUND_STATUSES: ReadonlySet<string> = new Set(['executed', 'failed']);

const REFUND_STATUS: Omit<WatchedStatus<ProviderRefund[]>, 'read'> = {
  kind: 'refund',
  idField: 'paymentId',
  topic: topics.refund,
  changes(paymentId, refunds, previous): RefundEvent[] {
    const before = new Map(previous?.map((refund) => [refund.id, refund.status]));
    return refunds.filter((refund) => before.get(refund.id) !== refund.status).map((refund) => ({ paymentId, refund }));
  },
  isFinal: (refunds) => refunds.every((refund) => FINAL_REFUND_STATUSES.has(refund.status)),
  wakes(payload) {
    const status = (payload as RefundEvent | undefined)?.refund?.status;
    return typeof status === 'string' && !FINAL_REFUND_STATUSES.has(status);
  },
};

/**
 * The provider sends refund webhooks only for the end (executed, failed), so a refund's authorization is seen by
 * reading GET /v3/payments/{id}/refunds while anyone watches the payment's refunds (StatusWatchers: one reader
 * across instances, backing off while nothing changes). Each refund whose status differs from the last read is
 * published as a RefundEvent; the watch rests once every refund of the payment is final, and starts again when an
 * event shows one that is not (a refund just made, on any instance).
 */
export class RefundWatchers extends StatusWatchers<ProviderRefund[]> {
  constructor(payments: PaymentsClient, deps: StatusWatchDeps, settings?: StatusWatchSettings) {
    super({ ...REFUND_STATUS, read: (paymentId) => payments.listRefunds(paymentId) }, deps, settings);
  }
}
