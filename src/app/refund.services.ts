import { RefundKeyStore, RefundService, type RefundEvents } from '../refunds';
import type { Database } from '../platform/db/database';
import type { Logger } from '../platform/observability/logger';
import type { GatewayMetrics } from '../platform/observability/gateway-metrics';
import type { PaymentsClient } from '../platform/provider/payments.client';
import { topics } from '../platform/live/topics';
import type { LiveServices } from './live.services';

/** The refunds module's key store and service, announcing refunds on refundUpdated's topic. */
export function createRefundServices(deps: {
  database: Database;
  payments: PaymentsClient;
  live: Pick<LiveServices, 'bus' | 'refundReads'>;
  logger: Logger;
  /** Epoch ms (default Date.now); tests step it past the provider's 24 hours. */
  clock?: () => number;
  metrics: Pick<GatewayMetrics, 'refundClaimConflict'>;
}): { refundKeys: RefundKeyStore; refunds: RefundService } {
  const { database, payments, live, logger } = deps;
  const clock = deps.clock ?? Date.now;
  const refundKeys = new RefundKeyStore(database, clock, { logger, onClaimConflict: (claim) => deps.metrics.refundClaimConflict(claim) });
  const events: RefundEvents = {
    publish: (event) => live.bus.publish(topics.refund(event.paymentId), event),
    changed: (paymentId) => live.refundReads.changed(paymentId),
  };
  return { refundKeys, refunds: new RefundService({ payments, keys: refundKeys, events, clock, logger }) };
}
