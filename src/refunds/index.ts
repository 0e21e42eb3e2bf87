/** The refunds module (refunds and payments): what the rest of the gateway may use of it. */
import type { Database } from '../platform/db/database';
import { CoalescedReads } from '../platform/live/coalesced-reads';
import type { EventBus } from '../platform/live/event-bus';
import { topics } from '../platform/live/topics';
import type { Logger } from '../platform/observability/logger';
import type { PaymentsClient } from '../platform/provider/payments.client';
import type { ProviderRefund } from '../platform/provider/provider-types';
import type { PassJob, Scheduler } from '../platform/scheduler/scheduler';
import type { StatusWatchers, StatusWatchSettings } from '../platform/scheduler/status-watcher';
import type { ProviderEventHandler } from '../webhooks';
import { refundAttemptsPass } from './refund-attempts.job';
import { RefundKeyStore, type RefundClaimObserver } from './refund-key.store';
import { refundWatch } from './refund-watch.job';
import type { RefundEvent } from './refund.model';
import { RefundService } from './refund.service';
import { refundStream } from './refund.stream';
import type { Refund } from './refund.type';
import { refundWebhookHandlers } from './refund.webhook';

export { RefundService, type RefundEvents, type RefundServiceDeps } from './refund.service';
export { RefundKeyStore } from './refund-key.store';
export type { PaymentRecord, RefundEvent, RefundRecord, RefundStatus } from './refund.model';
export { RefundResolver } from './refund.resolver';
export { PaymentResolver } from './payment.resolver';
export { Refund } from './refund.type';
export { Payment } from './payment.type';
export { paymentNodeTypes } from './payment-node.resolver';
export { RefundPaymentInput } from './refund-payment.input';

export interface RefundsDeps {
  database: Database;
  payments: PaymentsClient;
  /** Where refundUpdated's events are published and heard. */
  bus: EventBus;
  /** Epoch ms; tests step it past the provider's 24 hours. */
  clock: () => number;
  logger: Logger;
  /** Counts a refund answered to one request that another request's claim also matched. */
  onClaimConflict: NonNullable<RefundClaimObserver['onClaimConflict']>;
  /** Runs the refund watches. */
  scheduler: Pick<Scheduler, 'watches'>;
  /** The pass over the refunds of payments with refundUpdated subscribers (AUTHORIZED has no webhook). */
  watchSettings: StatusWatchSettings;
  /** How long one read of a payment's refunds serves every refundUpdated subscription opening meanwhile. */
  stateReuseMs: number;
}

/** The refunds feature's parts: the key store, the service, the watches, refundUpdated's stream, webhooks and pass. */
export interface Refunds {
  /** Refund idempotency keys, including the ones the gateway generated. */
  keys: RefundKeyStore;
  service: RefundService;
  /** Reads the refunds of payments that refundUpdated subscribers watch, for the changes no webhook reports. */
  watchers: StatusWatchers<ProviderRefund[]>;
  stream: ReturnType<typeof refundStream>;
  /** The payment events this feature handles, by event type. */
  webhookHandlers: Record<string, ProviderEventHandler>;
  /** Its periodic passes, for the scheduler. */
  passes: PassJob[];
  close(): Promise<void>;
}

export function createRefunds(deps: RefundsDeps): Refunds {
  const { bus, payments, clock, logger } = deps;
  const publish = (event: RefundEvent): Promise<void> => bus.publish(topics.refund(event.paymentId), event);
  const reads = new CoalescedReads<Refund[] | null>({
    watch: (paymentId, changed) => bus.listen(topics.refund(paymentId), changed),
    reuseMs: deps.stateReuseMs,
  });
  const keys = new RefundKeyStore(deps.database, clock, { logger, onClaimConflict: deps.onClaimConflict });
  const service = new RefundService({ payments, keys, events: { publish, changed: (paymentId) => reads.changed(paymentId) }, clock, logger });
  const watchers = deps.scheduler.watches(refundWatch(payments, topics.refund), deps.watchSettings);
  return {
    keys,
    service,
    watchers,
    stream: refundStream({ bus, refunds: service, watchers, reads }),
    webhookHandlers: refundWebhookHandlers({ payments, publish }),
    passes: [refundAttemptsPass({ refunds: service, keys })],
    close: () => reads.close(),
  };
}
