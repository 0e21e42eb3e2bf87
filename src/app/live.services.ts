import type { ResolvedConfig } from '../platform/config/config';
import type { ProviderHttpClient } from '../platform/provider/http.client';
import type { PaymentsClient } from '../platform/provider/payments.client';
import type { Database } from '../platform/db/database';
import type { Logger } from '../platform/observability/logger';
import type { DataClient } from '../platform/provider/data.client';
import type { BearerAuth } from '../platform/provider/http.client';
import { DATA_TASK_WEBHOOK_PREFIX, DataTaskService, DataTaskStore, dataTaskWebhookHandler } from '../data-tasks';
import { MemoryEventBus, type EventBus } from '../platform/live/event-bus';
import { InProcessLeases, RedisLeases, type Leases } from '../platform/scheduler/lease';
import { RefundWatchers, type Refund } from '../refunds';
import { DEFAULT_STATUS_WATCH, type StatusWatchDeps, type StatusWatchSettings } from '../platform/scheduler/status-watcher';
import { DatabaseLeases } from '../platform/scheduler/database-leases';
import { Scheduler } from '../platform/scheduler/scheduler';
import type { GatewayMetrics } from '../platform/observability/gateway-metrics';
import { RedisConnection, isRedisUrl } from '../platform/store/redis-connection';
import { RedisEventBus } from '../platform/live/redis-event-bus';
import { DEFAULT_WEBHOOK_SETTINGS, PAYMENTS_WEBHOOK_PATH, createWebhookReceiver, dispatchByEventType, type WebhookReceiver } from '../webhooks';
import { refundWebhookHandlers } from '../refunds';
import { TracedEventBus } from '../platform/live/traced-event-bus';
import type { Telemetry } from '../platform/observability/telemetry';
import { CoalescedReads } from '../platform/live/coalesced-reads';
import { topics } from '../platform/live/topics';

export interface LiveSettings {
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
  webhookMaxBodyBytes: DEFAULT_WEBHOOK_SETTINGS.maxBodyBytes,
  webhookMaxSkewMs: DEFAULT_WEBHOOK_SETTINGS.maxSkewMs,
  jwksMinRefetchIntervalMs: DEFAULT_WEBHOOK_SETTINGS.jwksMinRefetchIntervalMs,
  payoutWatch: DEFAULT_STATUS_WATCH,
  refundWatch: DEFAULT_STATUS_WATCH,
  refundStateReuseMs: 1_000,
};

/** Webhooks, async data tasks and subscriptions: everything live, built once per gateway. */
export interface LiveServices {
  bus: EventBus;
  /** Async data tasks: started, completed by webhook or by their background pass, results served. */
  dataTasks: DataTaskService;
  /** The webhook routes (with their inbox); refunds and data tasks register their handlers here. */
  webhooks: WebhookReceiver;
  /** Background work: the periodic passes (database lease) and the per-id watches (leases that follow PUBSUB_URL). */
  scheduler: Scheduler;
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
  data: DataClient;
  /** The bank token of an active connection outside a request (a data task whose webhook never came). */
  connectionBearer(connectionId: string): Promise<BearerAuth | undefined>;
  /** The relational store: data tasks and the webhook inbox. */
  database: Database;
  /** Counts each webhook delivery by source and outcome (metrics). */
  onWebhook?(source: string, outcome: string): void;
  /** Counts the scheduler's passes and repairs. */
  metrics?: Pick<GatewayMetrics, 'reconcilerRun' | 'reconcilerRepair'>;
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
  // REDIS_KEY_PREFIX begins every channel and lease key, so deployments sharing a Redis never hear each other.
  const prefix = config.store.redisKeyPrefix;
  const connections = new Map<string, RedisConnection>();
  const redis = (url: string, role: string): RedisConnection => {
    const key = `${role} ${url}`;
    let connection = connections.get(key);
    if (!connection) connections.set(key, (connection = new RedisConnection(url, role, logger)));
    return connection;
  };

  const untracedBus: EventBus = isRedisUrl(config.store.pubsubUrl)
    ? new RedisEventBus(redis(config.store.pubsubUrl, 'commands'), redis(config.store.pubsubUrl, 'subscriber'), prefix, logger)
    : new MemoryEventBus(logger);
  const bus = deps.telemetry?.enabled ? new TracedEventBus(untracedBus, deps.telemetry) : untracedBus;
  const leases: Leases = isRedisUrl(config.store.pubsubUrl) ? new RedisLeases(redis(config.store.pubsubUrl, 'commands'), prefix) : new InProcessLeases();
  let publicUrl = config.server.publicUrl;
  const currentPublicUrl = (): string => {
    if (!publicUrl) throw new Error('the gateway’s public URL is not known until it listens');
    return publicUrl.replace(/\/+$/, '');
  };
  const dataTasks = createDataTasks(config, logger, deps, bus, currentPublicUrl);
  const webhooks = createWebhooks(config, logger, deps, settings, { bus, dataTasks, publicUrl: () => publicUrl });
  const refundReads = new CoalescedReads<Refund[] | null>({
    watch: (paymentId, changed) => bus.listen(topics.refund(paymentId), changed),
    reuseMs: settings.refundStateReuseMs,
  });
  const watchDeps = { bus, leases, logger, telemetry: deps.telemetry };
  const scheduler = createScheduler(config, deps, watchDeps);
  const refundWatchers = scheduler.adopt(new RefundWatchers(deps.payments, topics.refund, scheduler.watchDeps, settings.refundWatch));

  return {
    bus,
    dataTasks,
    webhooks,
    scheduler,
    refundWatchers,
    refundReads,
    publicUrl: currentPublicUrl,
    setPublicUrl(url) {
      publicUrl = url;
    },
    async checkReady() {
      await bus.checkReady();
    },
    async close() {
      await scheduler.close();
      await webhooks.idle();
      await refundReads.close();
      await bus.close();
      await Promise.allSettled([...connections.values()].map((connection) => connection.close()));
    },
  };
}

function createDataTasks(config: ResolvedConfig, logger: Logger, deps: LiveDependencies, bus: EventBus, publicUrl: () => string): DataTaskService {
  return new DataTaskService({
    data: deps.data,
    store: new DataTaskStore(deps.database),
    events: { publish: (snapshot) => bus.publish(topics.dataTask(snapshot.id), snapshot) },
    clock: Date.now,
    logger,
    settings: { ...config.limits.dataTasks, webhookGraceMs: config.money.dataTaskWebhookGraceMs },
    publicUrl,
    connectionBearer: (connectionId) => deps.connectionBearer(connectionId),
  });
}

/** The provider's webhooks, each route handed to the feature it concerns. */
function createWebhooks(
  config: ResolvedConfig,
  logger: Logger,
  deps: LiveDependencies,
  settings: LiveSettings,
  live: { bus: EventBus; dataTasks: DataTaskService; publicUrl(): string | undefined },
): WebhookReceiver {
  const refunds = refundWebhookHandlers({ payments: deps.payments, publish: (event) => live.bus.publish(topics.refund(event.paymentId), event) });
  return createWebhookReceiver({
    database: deps.database,
    settings: {
      maxBodyBytes: settings.webhookMaxBodyBytes,
      maxSkewMs: settings.webhookMaxSkewMs,
      jwksMinRefetchIntervalMs: settings.jwksMinRefetchIntervalMs,
      jwksUrls: config.provider.webhookJwksUrls,
    },
    fetchJwks: async (url) => (await deps.http.send<unknown>({ route: 'webhooks.jwks', method: 'GET', url })).body,
    routes: [
      { source: 'payments', path: PAYMENTS_WEBHOOK_PATH, handler: dispatchByEventType(refunds, logger) },
      { source: 'data', path: DATA_TASK_WEBHOOK_PREFIX, prefix: true, handler: dataTaskWebhookHandler(live.dataTasks, logger) },
    ],
    publicUrl: live.publicUrl,
    logger,
    onOutcome: deps.onWebhook,
    telemetry: deps.telemetry,
  });
}

/** The one scheduler: passes under the database lease (every instance shares the store), watches on `watches`. */
function createScheduler(config: ResolvedConfig, deps: LiveDependencies, watches: StatusWatchDeps): Scheduler {
  return new Scheduler(
    {
      passLeases: new DatabaseLeases(deps.database),
      watches,
      logger: watches.logger,
      telemetry: deps.telemetry,
      onPass: (outcome) => deps.metrics?.reconcilerRun(outcome),
      onRepair: (kind) => deps.metrics?.reconcilerRepair(kind),
    },
    { intervalMs: config.money.reconcileIntervalMs },
  );
}
