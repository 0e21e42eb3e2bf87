import type { ResolvedConfig } from '../platform/config/config';
import type { ProviderHttpClient } from '../platform/provider/http.client';
import type { PaymentsClient } from '../platform/provider/payments.client';
import type { PayoutClient } from '../platform/provider/payout.client';
import type { Database } from '../platform/db/database';
import type { Logger } from '../platform/observability/logger';
import { DataTaskStore } from '../data-tasks/data-task.store';
import { EventInbox } from '../webhooks/event-inbox';
import { DataTaskResults } from '../data-tasks/data-tasks';
import { MemoryEventBus, type EventBus } from '../platform/live/event-bus';
import { JwksKeyCache } from '../webhooks/jwks-cache';
import { InProcessLeases, RedisLeases, type Leases } from '../platform/scheduler/lease';
import { PayoutWatchers } from '../payouts/payout-watcher';
import { RefundWatchers, type Refund } from '../refunds';
import { DEFAULT_STATUS_WATCH, type StatusWatchSettings } from '../platform/scheduler/status-watcher';
import { RedisConnection, isRedisUrl } from '../platform/store/redis-connection';
import { RedisEventBus } from '../platform/live/redis-event-bus';
import { createWebhookHandlers } from '../webhooks/webhook.handlers';
import { MAX_WEBHOOK_BODY_BYTES, WebhookReceiver } from '../webhooks/webhook.receiver';
import { WebhookVerifier } from '../webhooks/webhook-verifier';
import { TracedEventBus } from '../platform/live/traced-event-bus';
import type { Telemetry } from '../platform/observability/telemetry';
import { CoalescedReads } from '../platform/live/coalesced-reads';
import { topics } from '../platform/live/topics';

export interface LiveSettings {
  /** Prefixes every Redis key and channel (and Postgres nothing): lets several deployments or test runs share a Redis. */
  keyPrefix: string;
  webhookMaxBodyBytes: number;
  /** How far a webhook's signed timestamp may be from now. */
  webhookMaxSkewMs: number;
  jwksMinRefetchIntervalMs: number;
  payoutWatch: StatusWatchSettings;
  /** The pass over the refunds of payments with refundUpdated subscribers (AUTHORIZED has no webhook). */
  refundWatch: StatusWatchSettings;
  /**
   * How long one read of a payment's refunds serves as the current state of every refundUpdated subscription that
   * opens meanwhile, as long as no refund event for the payment has come (see CoalescedReads).
   */
  refundStateReuseMs: number;
}

export const DEFAULT_LIVE_SETTINGS: LiveSettings = {
  keyPrefix: '',
  webhookMaxBodyBytes: MAX_WEBHOOK_BODY_BYTES,
  webhookMaxSkewMs: 5 * 60 * 1000,
  jwksMinRefetchIntervalMs: 5_000,
  payoutWatch: DEFAULT_STATUS_WATCH,
  refundWatch: DEFAULT_STATUS_WATCH,
  refundStateReuseMs: 1_000,
};

/** Webhooks, async data tasks and subscriptions: everything live, built once per gateway. */
export interface LiveServices {
  bus: EventBus;
  inbox: EventInbox;
  dataTasks: DataTaskStore;
  dataTaskResults: DataTaskResults;
  webhooks: WebhookReceiver;
  payoutWatchers: PayoutWatchers;
  /** Reads the refunds of payments that refundUpdated subscribers watch, for the changes no webhook reports. */
  refundWatchers: RefundWatchers;
  /** The refunds of a payment, read for the current state of refundUpdated subscriptions. */
  refundReads: CoalescedReads<Refund[] | null>;
  /** Where the provider reaches this gateway (PUBLIC_URL, or the address it listens on). */
  publicUrl(): string;
  setPublicUrl(url: string): void;
  checkReady(): Promise<void>;
  close(): Promise<void>;
}

export interface LiveDependencies {
  http: ProviderHttpClient;
  payments: PaymentsClient;
  payouts: PayoutClient;
  /** The relational store: data tasks and the webhook inbox. */
  database: Database;
  /** Counts each webhook delivery by source and outcome (metrics). */
  onWebhook?(source: string, outcome: string): void;
  /** Spans for webhooks (received, stored, published, delivered) and the payout and refund watchers' reads. */
  telemetry?: Telemetry;
}

/**
 * Which backend does what:
 * - events (EventBus) follow PUBSUB_URL: memory, or Redis channels shared by every instance;
 * - the webhook inbox and data tasks live in the relational store (STORE_URL), whose primary keys and conditional
 *   updates hold across every instance sharing it;
 * - payout- and refund-watcher leases follow PUBSUB_URL: with Redis events, one instance watches for all; with in-memory
 *   events each instance has only its own subscribers, so each watches for them.
 */
export function createLiveServices(config: ResolvedConfig, logger: Logger, deps: LiveDependencies, overrides: Partial<LiveSettings> = {}): LiveServices {
  const settings: LiveSettings = { ...DEFAULT_LIVE_SETTINGS, ...overrides };
  const prefix = `${settings.keyPrefix}bankgraph:`;
  const connections = new Map<string, RedisConnection>();
  const redis = (url: string, role: string): RedisConnection => {
    const key = `${role} ${url}`;
    let connection = connections.get(key);
    if (!connection) connections.set(key, (connection = new RedisConnection(url, role, logger)));
    return connection;
  };

  const untracedBus: EventBus = isRedisUrl(config.pubsubUrl)
    ? new RedisEventBus(redis(config.pubsubUrl, 'commands'), redis(config.pubsubUrl, 'subscriber'), prefix, logger)
    : new MemoryEventBus(logger);
  const bus = deps.telemetry?.enabled ? new TracedEventBus(untracedBus, deps.telemetry) : untracedBus;
  const leases: Leases = isRedisUrl(config.pubsubUrl) ? new RedisLeases(redis(config.pubsubUrl, 'commands'), prefix) : new InProcessLeases();
  const inbox = new EventInbox(deps.database);
  const dataTasks = new DataTaskStore(deps.database);

  let publicUrl = config.publicUrl;
  const jwks = new JwksKeyCache(
    config.provider.webhookJwksUrls,
    async (url) => (await deps.http.send<unknown>({ route: 'webhooks.jwks', method: 'GET', url })).body,
    { minRefetchIntervalMs: settings.jwksMinRefetchIntervalMs },
  );
  const webhooks = new WebhookReceiver(
    new WebhookVerifier(jwks, { maxSkewMs: settings.webhookMaxSkewMs }),
    createWebhookHandlers({ inbox, dataTasks, bus, payments: deps.payments, logger }),
    // The provider signs the path of the URL it posts to; behind a proxy that strips PUBLIC_URL's path, that
    // path is PUBLIC_URL's path followed by the one received here.
    () => (publicUrl ? new URL(publicUrl).pathname.replace(/\/+$/, '') : ''),
    logger,
    settings.webhookMaxBodyBytes,
    deps.onWebhook,
    deps.telemetry,
  );
  const refundReads = new CoalescedReads<Refund[] | null>({
    watch: (paymentId, changed) => bus.listen(topics.refund(paymentId), changed),
    reuseMs: settings.refundStateReuseMs,
  });
  const watchDeps = { bus, leases, logger, telemetry: deps.telemetry };
  const payoutWatchers = new PayoutWatchers(deps.payouts, watchDeps, settings.payoutWatch);
  const refundWatchers = new RefundWatchers(deps.payments, topics.refund, watchDeps, settings.refundWatch);

  return {
    bus,
    inbox,
    dataTasks,
    dataTaskResults: new DataTaskResults(dataTasks, config.dataTasks.resultsMaxBytes),
    webhooks,
    payoutWatchers,
    refundWatchers,
    refundReads,
    publicUrl() {
      if (!publicUrl) throw new Error('the gateway’s public URL is not known until it listens');
      return publicUrl.replace(/\/+$/, '');
    },
    setPublicUrl(url) {
      publicUrl = url;
    },
    async checkReady() {
      await bus.checkReady();
    },
    async close() {
      await Promise.all([payoutWatchers.close(), refundWatchers.close()]);
      await webhooks.idle();
      await refundReads.close();
      await bus.close();
      await Promise.allSettled([...connections.values()].map((connection) => connection.close()));
    },
  };
}
