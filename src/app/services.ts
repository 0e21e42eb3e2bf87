import { createBeneficiaryServices } from './beneficiary.services';
import type { BeneficiaryLedger, BeneficiaryService } from '../beneficiaries';
import type { PayoutService, PayoutStore, PayoutView } from '../payouts';
import type { StatusWatchers } from '../platform/scheduler/status-watcher';
import { createPayoutServices } from './payout.services';
import type { RefundKeyStore, RefundService } from '../refunds';
import { createRefundServices } from './refund.services';
import type { ResolvedConfig } from '../platform/config/config';
import { AuthClient } from '../platform/provider/auth.client';
import { DataClient } from '../platform/provider/data.client';
import { ProviderHttpClient, type AttemptEvent, type BearerAuth } from '../platform/provider/http.client';
import { PaymentsClient } from '../platform/provider/payments.client';
import { PayoutClient } from '../platform/provider/payout.client';
import { CACHE_TIMEOUT_MS, DEFAULT_CACHE_TTL_SECONDS, ResponseCache } from '../platform/provider/response-cache';
import { ClientCredentialsTokenManager } from '../platform/provider/token-manager';
import type { Database } from '../platform/db/database';
import { VerificationClient } from '../platform/provider/verification.client';
import type { Logger } from '../platform/observability/logger';
import { GatewayMetrics } from '../platform/observability/gateway-metrics';
import {
  createIdentity,
  type ConnectionStore,
  type IdentityEvents,
  type IdentityService,
  type LoginStateStore,
  type MerchantKeys,
  type PrincipalResolver,
  type SessionStore,
  type UserTokenProvider,
} from '../identity';
import type { RecentRevocations } from '../platform/access/recent-revocations';
import { topics } from '../platform/live/topics';
import { createKeyv } from '../platform/store/keyv.factory';
import { createLiveServices, type LiveServices, type LiveSettings } from './live.services';
import type { Telemetry } from '../platform/observability/telemetry';
import type { ReadinessCheck } from '../platform/observability/ops.routes';

/** Everything a request may need that outlives the request: clients, stores, caches. Built once per gateway. */
export interface Services {
  config: ResolvedConfig;
  logger: Logger;
  /** The relational store (STORE_URL): money and identity, with constraints and transactions. */
  database: Database;
  http: ProviderHttpClient;
  auth: AuthClient;
  data: DataClient;
  verification: VerificationClient;
  payouts: PayoutClient;
  payments: PaymentsClient;
  appTokens: ClientCredentialsTokenManager;
  userTokens: UserTokenProvider;
  sessions: SessionStore;
  loginStates: LoginStateStore;
  /** Users and their bank connections (tokens encrypted at rest). */
  connections: ConnectionStore;
  /** Who a request's credentials name: merchant key, session (bank identity) or the app's JWT (app identity). */
  principals: PrincipalResolver;
  /** Logouts, banks connected and disconnected, revoked users: announced to every instance. */
  identityEvents: IdentityEvents;
  /** Revokes users, bank connections and sessions, then announces it. */
  identity: IdentityService;
  /** Logouts and revoked users heard lately, so a principal whose lookup straddled one is not trusted (server.ts feeds it). */
  revocations: RecentRevocations;
  /** Verified beneficiaries per user, and who verified each IBAN. */
  beneficiaries: BeneficiaryLedger;
  /** Account-holder verification and verified beneficiaries (src/beneficiaries). */
  beneficiaryService: BeneficiaryService;
  /** Payouts created through the gateway (the provider client is `payouts`). */
  payoutLedger: PayoutStore;
  /** Payouts: creation, approval, reads and repairs (src/payouts). */
  payoutService: PayoutService;
  /** Reads the payouts that payoutUpdated subscribers watch (the scheduler's payout watches). */
  payoutWatchers: StatusWatchers<PayoutView>;
  /** Refund idempotency keys, including the ones the gateway generated. */
  refundKeys: RefundKeyStore;
  /** Refunds and payments (src/refunds). */
  refunds: RefundService;
  responseCache: ResponseCache;
  merchantKeys: MerchantKeys;
  /** Webhooks, async data tasks, the event bus and the scheduler. */
  live: LiveServices;
  /** Prometheus metrics (/metrics); webhook receivers report through `metrics.webhookEvent(source, outcome)`. */
  metrics: GatewayMetrics;
  /** OpenTelemetry tracing (src/telemetry); `enabled` false when no exporter is configured. */
  telemetry: Telemetry | undefined;
  /** What /readyz asks: the store and the pubsub are required, the cache only degrades (docs/operations.md). */
  readiness: ReadinessCheck[];
  close(): Promise<void>;
}

export interface ServicesOptions {
  live?: Partial<LiveSettings>;
  /** The refund key store's clock in epoch ms (default Date.now); tests step it past the provider's 24 hours. */
  refundClock?: () => number;
  /** The payout ledger's clock (default Date.now). */
  payoutClock?: () => number;
}

export async function createServices(
  config: ResolvedConfig,
  logger: Logger,
  database: Database,
  hooks: ServiceHooks = {},
  options: ServicesOptions = {},
): Promise<Services> {
  const { provider } = config;
  const metrics = hooks.metrics ?? new GatewayMetrics({ defaultMetrics: false });
  const http = createProviderHttp(config, logger, metrics, hooks);
  const auth = new AuthClient(http, { authUrl: provider.authUrl, clientId: provider.clientId, clientSecret: provider.clientSecret });
  const appTokens = new ClientCredentialsTokenManager(auth);
  // Not required for readiness: a cache outage is answered as misses (and per-instance rate limits), not as an unready instance.
  const cacheKeyv = await createKeyv<unknown>(config.store.cacheUrl, `${config.store.redisKeyPrefix}cache`);
  const payments = new PaymentsClient(http, { paymentsUrl: provider.paymentsUrl }, appTokens);
  const payouts = new PayoutClient(http, { payoutUrl: provider.payoutUrl }, appTokens);
  const data = new DataClient(http, { dataUrl: provider.dataUrl, lazyLists: config.server.fastPaths });
  // Bound late: identity is built after live, whose data tasks it deletes on revocation.
  const connectionBearer = async (id: string): Promise<BearerAuth | undefined> =>
    (await identity.connections.tokens(id)) ? identity.userTokens.bearerFor(id) : undefined;
  const live = createLiveServices(
    config,
    logger,
    { http, payments, data, connectionBearer, database, metrics, telemetry: hooks.telemetry, onWebhook: (source, kind) => metrics.webhookEvent(source, kind) },
    options.live,
  );
  const beneficiaryServices = createBeneficiaryServices({
    database,
    verification: new VerificationClient(http, { verificationUrl: provider.verificationUrl }),
  });
  const beneficiaries = beneficiaryServices.beneficiaries;
  const identity = createIdentity({ config, database, auth, bus: live.bus, topic: topics.identity, held: live.dataTasks });

  return {
    config,
    logger,
    database,
    http,
    auth,
    data,
    payouts,
    payments,
    appTokens,
    ...identity,
    verification: beneficiaryServices.verification,
    beneficiaries,
    beneficiaryService: beneficiaryServices.beneficiaryService,
    ...createPayoutServices({ config, logger, database, payouts, beneficiaries, live, metrics, clock: options.payoutClock, watch: options.live?.payoutWatch }),
    ...createRefundServices({ database, payments, live, logger, clock: options.refundClock, metrics }),
    responseCache: new ResponseCache(
      cacheKeyv,
      DEFAULT_CACHE_TTL_SECONDS,
      metrics.cacheEvents,
      Date.now,
      config.store.cacheUrl === 'memory' ? Number.POSITIVE_INFINITY : CACHE_TIMEOUT_MS,
    ),
    live,
    metrics,
    telemetry: hooks.telemetry,
    readiness: [
      { name: 'store (STORE_URL)', required: true, check: () => database.ping() },
      { name: 'pubsub (PUBSUB_URL)', required: true, check: () => live.checkReady() },
      ...(config.store.cacheUrl === 'memory'
        ? []
        : [{ name: 'cache (CACHE_URL)', required: false, check: async () => void (await cacheKeyv.has('readyz')), timeoutMs: CACHE_TIMEOUT_MS }]),
    ],
    async close() {
      // Live first: watchers stop and accepted webhooks finish publishing while the provider client still works.
      await live.close();
      await http.close();
      // The cache is dropped at once: it loses nothing, and a polite quit would wait forever on a Redis that is down.
      const cacheStore = cacheKeyv.store as { disconnect?(force?: boolean): Promise<void> };
      await Promise.allSettled([cacheStore.disconnect?.(true), database.close()]);
    },
  };
}

type ServiceHooks = { onProviderAttempt?: (event: AttemptEvent) => void; metrics?: GatewayMetrics; telemetry?: Telemetry };

/** The one HTTP client of every provider call: signing, retries and breakers, each logged and counted. */
function createProviderHttp(config: ResolvedConfig, logger: Logger, metrics: GatewayMetrics, hooks: ServiceHooks): ProviderHttpClient {
  const { provider } = config;
  return new ProviderHttpClient({
    connectTimeoutMs: config.limits.providerCalls.connectTimeoutMs,
    headersTimeoutMs: config.limits.providerCalls.headersTimeoutMs,
    bodyTimeoutMs: config.limits.providerCalls.bodyTimeoutMs,
    maxAttempts: config.limits.providerCalls.maxAttempts,
    backoffBaseMs: config.limits.providerCalls.backoffBaseMs,
    backoffCapMs: config.limits.providerCalls.backoffCapMs,
    retryAfterCapMs: config.limits.providerCalls.maxRetryAfterMs,
    connectionsPerOrigin: config.limits.providerCalls.connectionsPerOrigin,
    maxBodyBytes: config.limits.providerCalls.maxBodyBytes,
    breaker: {
      failures: config.limits.providerCalls.breakerFailures,
      cooldownMs: config.limits.providerCalls.breakerCooldownMs,
      spreadConnections: config.limits.providerCalls.breakerRouteConnections,
    },
    onCircuitStateChange: (route, state) => {
      logger.warn({ route, state }, 'provider circuit breaker changed state');
      metrics.circuitState(route, state);
    },
    onConnectionCircuitChange: (change) => {
      logger.info(change, "a bank connection's provider circuit breaker changed state");
      metrics.connectionCircuits(change.route, change.openOnRoute);
    },
    signingKey: { keyId: provider.signingKey.keyId, privateKeyPem: provider.signingKey.privateKeyPem },
    telemetry: hooks.telemetry,
    onAttempt: (event) => {
      if (event.retry || event.status === undefined || event.status >= 500) logger.debug({ providerCall: event }, 'provider call');
      metrics.providerAttempt(event);
      hooks.onProviderAttempt?.(event);
    },
  });
}
