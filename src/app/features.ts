import { createAccounts, type Accounts } from '../accounts';
import { createBeneficiaries, type Beneficiaries } from '../beneficiaries';
import { createDataTasks, type DataTasks } from '../data-tasks';
import { createIdentity, type Identity, type IdentitySettings } from '../identity';
import { createPayouts, type Payouts } from '../payouts';
import { createRefunds, type Refunds } from '../refunds';
import { createWebhookReceiver, dispatchByEventType, PAYMENTS_WEBHOOK_PATH, type WebhookReceiver } from '../webhooks';
import type { ResolvedConfig } from '../platform/config/config';
import type { Database } from '../platform/db/database';
import { topics } from '../platform/live/topics';
import type { GatewayMetrics } from '../platform/observability/gateway-metrics';
import type { Logger } from '../platform/observability/logger';
import type { ReadinessCheck } from '../platform/observability/ops.routes';
import type { Telemetry } from '../platform/observability/telemetry';
import type { BearerAuth } from '../platform/provider/http.client';
import { CACHE_TIMEOUT_MS, DEFAULT_CACHE_TTL_SECONDS, ResponseCache } from '../platform/provider/response-cache';
import { createKeyv } from '../platform/store/keyv.factory';
import type { Clock } from './clock';
import { createLive, type Live, type LiveSettings } from './live';
import { createProviderClients, type ProviderClients } from './provider';

/** What the features are built on: the store, logs, metrics, traces, the one clock and the live settings. */
export interface FeatureGround {
  logger: Logger;
  /** The relational store (STORE_URL): money and identity, with constraints and transactions. */
  database: Database;
  metrics: GatewayMetrics;
  telemetry: Telemetry | undefined;
  clock: Clock;
  live: LiveSettings;
}

/** The gateway's features, each built from only what it uses, in the order they depend on each other. */
export interface Features {
  provider: ProviderClients;
  responseCache: ResponseCache;
  /** The event bus, the scheduler and the public URL. */
  live: Live;
  identity: Identity;
  accounts: Accounts;
  beneficiaries: Beneficiaries;
  dataTasks: DataTasks;
  payouts: Payouts;
  refunds: Refunds;
  /** The webhook routes (with their inbox): the payments events of refunds, the data notifications of data tasks. */
  webhooks: WebhookReceiver;
  /** What /readyz asks: the store and the pubsub are required, the cache only degrades (docs/operations.md). */
  readiness: ReadinessCheck[];
  close(): Promise<void>;
}

export async function composeFeatures(config: ResolvedConfig, ground: FeatureGround): Promise<Features> {
  const { logger, database, metrics, telemetry, clock } = ground;
  const provider = createProviderClients(config, logger, metrics, telemetry, clock);
  // Not required for readiness: a cache outage is answered as misses (and per-instance rate limits), not as an unready instance.
  const cacheKeyv = await createKeyv<unknown>(config.store.cacheUrl, `${config.store.redisKeyPrefix}cache`);
  const cacheTimeoutMs = config.store.cacheUrl === 'memory' ? Number.POSITIVE_INFINITY : CACHE_TIMEOUT_MS;
  const responseCache = new ResponseCache(cacheKeyv, DEFAULT_CACHE_TTL_SECONDS, metrics.cacheEvents, clock, cacheTimeoutMs);
  const live = createLive(config, { database, logger, metrics, telemetry, clock });
  const { bus, scheduler } = live;
  // Bound late: identity is built after data tasks, whose tasks it deletes on revocation.
  const connectionBearer = async (id: string): Promise<BearerAuth | undefined> =>
    (await identity.connections.tokens(id)) ? identity.userTokens.bearerFor(id) : undefined;
  const dataTasks = createDataTasks({
    data: provider.data,
    database,
    bus,
    clock,
    logger,
    settings: { ...config.limits.dataTasks, webhookGraceMs: config.money.dataTaskWebhookGraceMs },
    publicUrl: () => live.publicUrl(),
    connectionBearer,
  });
  const identity = createIdentity({
    settings: identitySettings(config),
    database,
    auth: provider.auth,
    bus,
    topic: topics.identity,
    held: dataTasks.service,
    clock,
  });
  const accounts = createAccounts({ data: provider.data, responseCache, connections: identity.connections, userTokens: identity.userTokens });
  const beneficiaries = createBeneficiaries({ database, verification: provider.verification, clock });
  const payouts = createPayouts({
    database,
    provider: provider.payouts,
    beneficiaries: beneficiaries.ledger,
    bus,
    clock,
    logger,
    settings: config.money,
    metrics,
    scheduler,
    watchSettings: ground.live.payoutWatch,
  });
  const refunds = createRefunds({
    database,
    payments: provider.payments,
    bus,
    clock,
    logger,
    onClaimConflict: (claim) => metrics.refundClaimConflict(claim),
    scheduler,
    watchSettings: ground.live.refundWatch,
    stateReuseMs: ground.live.refundStateReuseMs,
  });
  const webhooks = createWebhooks(config, ground, { provider, live, dataTasks, refunds });
  const readiness: ReadinessCheck[] = [
    { name: 'store (STORE_URL)', required: true, check: () => database.ping() },
    { name: 'pubsub (PUBSUB_URL)', required: true, check: () => live.checkReady() },
    ...(config.store.cacheUrl === 'memory'
      ? []
      : [{ name: 'cache (CACHE_URL)', required: false, check: async () => void (await cacheKeyv.has('readyz')), timeoutMs: CACHE_TIMEOUT_MS }]),
  ];
  const close = async (): Promise<void> => {
    // Live work first: watchers stop and accepted webhooks finish publishing while the provider client still works.
    await scheduler.close();
    await webhooks.idle();
    await refunds.close();
    await live.close();
    await provider.http.close();
    // The cache is dropped at once: it loses nothing, and a polite quit would wait forever on a Redis that is down.
    const cacheStore = cacheKeyv.store as { disconnect?(force?: boolean): Promise<void> };
    await Promise.allSettled([cacheStore.disconnect?.(true), database.close()]);
  };
  return { provider, responseCache, live, identity, accounts, beneficiaries, dataTasks, payouts, refunds, webhooks, readiness, close };
}

function identitySettings(config: ResolvedConfig): IdentitySettings {
  return {
    appIdentity: config.identity.app,
    merchantKeys: config.identity.merchantKeys,
    tokenEncryptionKey: config.identity.tokenEncryptionKey,
    storeUrl: config.store.url,
    sessionIdleTimeoutMs: config.live.sessionIdleTimeoutMs,
  };
}

/** The provider's webhooks, each route handed to the feature it concerns. */
function createWebhooks(
  config: ResolvedConfig,
  ground: FeatureGround,
  features: Pick<Features, 'provider' | 'live' | 'dataTasks' | 'refunds'>,
): WebhookReceiver {
  const { logger, live: settings } = ground;
  const { http } = features.provider;
  return createWebhookReceiver({
    database: ground.database,
    settings: {
      maxBodyBytes: settings.webhookMaxBodyBytes,
      maxSkewMs: settings.webhookMaxSkewMs,
      jwksMinRefetchIntervalMs: settings.jwksMinRefetchIntervalMs,
      jwksUrls: config.provider.webhookJwksUrls,
    },
    fetchJwks: async (url) => (await http.send<unknown>({ route: 'webhooks.jwks', method: 'GET', url })).body,
    routes: [
      { source: 'payments', path: PAYMENTS_WEBHOOK_PATH, handler: dispatchByEventType(features.refunds.webhookHandlers, logger) },
      features.dataTasks.webhookRoute,
    ],
    publicUrl: () => features.live.knownPublicUrl(),
    logger,
    onOutcome: (source, outcome) => ground.metrics.webhookEvent(source, outcome),
    telemetry: ground.telemetry,
    clock: ground.clock,
  });
}
