import type { PaymentsClient } from '../datasources/payments.client';
import type { ProviderRefund } from '../datasources/provider-types';
import type { Logger } from '../logger';
import type { Telemetry } from '../telemetry/telemetry';
import type { EventBus } from './event-bus';
import type { Leases } from './lease';
import { topics } from './topics';
import { DEFAULT_STATUS_WATCH, StatusWatchers, type StatusWatchSettings } from './status-watcher';
import type { RefundEvent } from './webhook.handlers';

/** Statuses no refund leaves; their webhooks (refund_executed, refund_failed) announce them. */
const FINAL_REFUND_STATUSES: ReadonlySet<string> = new Set(['executed', 'failed']);

export const isFinalProviderRefund = (refund: ProviderRefund): boolean => FINAL_REFUND_STATUSES.has(refund.status);

/**
 * The provider sends refund webhooks only for the end (executed, failed), so a refund's authorization is seen by
 * reading GET /v3/payments/{id}/refunds while anyone watches the payment's refunds (StatusWatchers: one reader
 * across instances, backing off while nothing changes). Each refund whose status differs from the last read is
 * published as a RefundEvent; the watch rests once every refund of the payment is final, and starts again when an
 * event shows one that is not (a refund just made, on any instance).
 */
export class RefundWatchers extends StatusWatchers<ProviderRefund[]> {
  constructor(payments: PaymentsClient, bus: EventBus, leases: Leases, logger: Logger, settings: StatusWatchSettings = DEFAULT_STATUS_WATCH, telemetry?: Telemetry) {
    super(
      {
        kind: 'refund',
        idField: 'paymentId',
        read: (paymentId) => payments.listRefunds(paymentId),
        async publishChanges(paymentId, refunds, previous) {
          const before = new Map(previous?.map((refund) => [refund.id, refund.status]));
          const changed = refunds.filter((refund) => before.get(refund.id) !== refund.status);
          for (const refund of changed) {
            const event: RefundEvent = { paymentId, refund };
            await bus.publish(topics.refund(paymentId), event);
          }
          return changed.length > 0;
        },
        isFinal: (refunds) => refunds.every(isFinalProviderRefund),
        wakeOn: {
          topic: (paymentId) => topics.refund(paymentId),
          wakes: (payload) => {
            const refund = (payload as RefundEvent | undefined)?.refund;
            return typeof refund?.status === 'string' && !FINAL_REFUND_STATUSES.has(refund.status);
          },
        },
      },
      bus,
      leases,
      logger,
      settings,
      telemetry,
    );
  }
}
