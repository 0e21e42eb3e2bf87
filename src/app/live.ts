import type { Config, ResolvedConfig } from '../platform/config/config';
import type { Database } from '../platform/db/database';
import { MemoryEventBus, type EventBus } from '../platform/live/event-bus';
import { RedisEventBus } from '../platform/live/redis-event-bus';
import { TracedEventBus } from '../platform/live/traced-event-bus';
import type { GatewayMetrics } from '../platform/observability/gateway-metrics';
import type { Logger } from '../platform/observability/logger';
import type { Telemetry } from '../platform/observability/telemetry';
import { DatabaseLeases } from '../platform/scheduler/database-leases';
import { InProcessLeases, RedisLeases, type Leases } from '../platform/scheduler/lease';
import { Scheduler } from '../platform/scheduler/scheduler';
import type { StatusWatchSettings } from '../platform/scheduler/status-watcher';
import { isRedisUrl, RedisConnection } from '../platform/store/redis-connection';
import type { Clock } from './clock';

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

/** The webhook and watch settings the configuration gives (GatewayOptions.live overrides them for tests). */
export function liveSettingsOf(config: Pick<Config, 'webhooks' | 'watches'>): LiveSettings {
  return {
    webhookMaxBodyBytes: config.webhooks.maxBodyBytes,
    webhookMaxSkewMs: config.webhooks.maxSkewMs,
    jwksMinRefetchIntervalMs: config.webhooks.jwksMinRefetchIntervalMs,
    payoutWatch: config.watches.status,
    refundWatch: config.watches.status,
    refundStateReuseMs: config.watches.refundStateReuseMs,
  };
}

/** The event bus and the one scheduler, built before the features that publish on the one and run on the other. */
export interface Live {
  bus: EventBus;
  /** Background work: the periodic passes (database lease) and the per-id watches (leases that follow PUBSUB_URL). */
  scheduler: Scheduler;
  /** Where the provider reaches this gateway (PUBLIC_URL, or the address it listens on). */
  publicUrl(): string;
  /** PUBLIC_URL, or once listening the listening address; undefined before when none was configured. */
  knownPublicUrl(): string | undefined;
  setPublicUrl(url: string): void;
  checkReady(): Promise<void>;
  close(): Promise<void>;
}

export interface LiveDeps {
  database: Database;
  logger: Logger;
  metrics: Pick<GatewayMetrics, 'reconcilerRun' | 'reconcilerRepair'>;
  telemetry: Telemetry | undefined;
  clock: Clock;
}

/**
 * Which backend does what:
 * - events (EventBus) follow PUBSUB_URL: memory, or Redis channels shared by every instance;
 * - payout- and refund-watcher leases follow PUBSUB_URL: with Redis events, one instance watches for all; with in-memory
 *   events each instance has only its own subscribers, so each watches for them;
 * - the passes' lease lives in the relational store (STORE_URL), which every instance shares.
 */
export function createLive(config: ResolvedConfig, deps: LiveDeps): Live {
  const { logger, telemetry } = deps;
  // REDIS_KEY_PREFIX begins every channel and lease key, so deployments sharing a Redis never hear each other.
  const prefix = config.store.redisKeyPrefix;
  const connections = new Map<string, RedisConnection>();
  const redis = (role: string): RedisConnection => {
    let connection = connections.get(role);
    if (!connection) connections.set(role, (connection = new RedisConnection(config.store.pubsubUrl, role, logger)));
    return connection;
  };
  const onRedis = isRedisUrl(config.store.pubsubUrl);
  const untracedBus: EventBus = onRedis ? new RedisEventBus(redis('commands'), redis('subscriber'), prefix, logger) : new MemoryEventBus(logger);
  const bus = telemetry?.enabled ? new TracedEventBus(untracedBus, telemetry) : untracedBus;
  const leases: Leases = onRedis ? new RedisLeases(redis('commands'), prefix) : new InProcessLeases(deps.clock);
  const scheduler = new Scheduler(
    {
      passLeases: new DatabaseLeases(deps.database, deps.clock),
      watches: { bus, leases, logger, telemetry },
      logger,
      telemetry,
      onPass: (outcome) => deps.metrics.reconcilerRun(outcome),
      onRepair: (kind) => deps.metrics.reconcilerRepair(kind),
    },
    { intervalMs: config.money.reconcileIntervalMs },
  );
  let publicUrl = config.server.publicUrl;
  return {
    bus,
    scheduler,
    publicUrl() {
      if (!publicUrl) throw new Error('the gateway’s public URL is not known until it listens');
      return publicUrl.replace(/\/+$/, '');
    },
    knownPublicUrl: () => publicUrl,
    setPublicUrl(url) {
      publicUrl = url;
    },
    checkReady: () => bus.checkReady(),
    /** After the scheduler and everything that publishes have stopped. */
    async close() {
      await bus.close();
      await Promise.allSettled([...connections.values()].map((connection) => connection.close()));
    },
  };
}
