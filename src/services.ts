import type Keyv from 'keyv';
import { MerchantKeys, PrincipalResolver } from './auth/principal';
import { UserTokenProvider } from './auth/user-token.provider';
import type { ResolvedConfig } from './config';
import { AuthClient } from './datasources/auth.client';
import { DataClient } from './datasources/data.client';
import { ProviderHttpClient, type AttemptEvent } from './datasources/http.client';
import { PaymentsClient } from './datasources/payments.client';
import { PayoutClient } from './datasources/payout.client';
import { DEFAULT_CACHE_TTL_SECONDS, ResponseCache } from './datasources/response-cache';
import { ClientCredentialsTokenManager } from './datasources/token-manager';
import type { Database } from './db/database';
import { VerificationClient } from './datasources/verification.client';
import type { Logger } from './logger';
import { GatewayMetrics } from './metrics/gateway-metrics';
import { AppTokenVerifier } from './identity/app-token.verifier';
import { ConnectionStore } from './identity/connection.store';
import { tokenEncryptionKey } from './identity/encryption-key';
import { IdentityEvents } from './identity/identity-events';
import { TokenCipher } from './identity/token-cipher';
import { createKeyv } from './store/keyv.factory';
import { LoginStateStore } from './store/login-state.store';
import { SessionStore } from './store/session.store';
import { BeneficiaryStore } from './store/beneficiary.store';
import { PayoutStore } from './store/payout.store';
import { RefundKeyStore } from './store/refund-key.store';
import { createLiveServices, type LiveServices, type LiveSettings } from './subscriptions/live.services';

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
  /** Verified beneficiaries per user, and who verified each IBAN. */
  beneficiaries: BeneficiaryStore;
  /** Payouts created through the gateway (the provider client is `payouts`). */
  payoutRecords: PayoutStore;
  /** Refund idempotency keys, including the ones the gateway generated. */
  refundKeys: RefundKeyStore;
  responseCache: ResponseCache;
  merchantKeys: MerchantKeys;
  /** Webhooks, async data tasks, the event bus and payout watchers (src/subscriptions). */
  live: LiveServices;
  /** Prometheus metrics (/metrics); webhook receivers report through `metrics.webhookEvent(source, outcome)`. */
  metrics: GatewayMetrics;
  /** Resolves when every store and cache answers; rejects with the first that does not. */
  checkReady(): Promise<void>;
  close(): Promise<void>;
}

export interface ServicesOptions {
  /** Prefixes every store namespace and Redis key, so deployments (or test runs) can share one Redis. */
  keyPrefix?: string;
  live?: Partial<Omit<LiveSettings, 'keyPrefix'>>;
}

export function createServices(
  config: ResolvedConfig,
  logger: Logger,
  database: Database,
  hooks: { onProviderAttempt?: (event: AttemptEvent) => void; metrics?: GatewayMetrics } = {},
  options: ServicesOptions = {},
): Services {
  const { provider } = config;
  const metrics = hooks.metrics ?? new GatewayMetrics({ defaultMetrics: false });
  const http = new ProviderHttpClient({
    connectTimeoutMs: config.http.connectTimeoutMs,
    headersTimeoutMs: config.http.headersTimeoutMs,
    bodyTimeoutMs: config.http.bodyTimeoutMs,
    maxAttempts: config.http.maxAttempts,
    backoffBaseMs: config.http.backoffBaseMs,
    backoffCapMs: config.http.backoffCapMs,
    retryAfterCapMs: config.http.maxRetryAfterMs,
    connectionsPerOrigin: config.http.connectionsPerOrigin,
    signingKey: { keyId: provider.signingKey.keyId, privateKeyPem: provider.signingKey.privateKeyPem },
    onAttempt: (event) => {
      if (event.retry || event.status === undefined || event.status >= 500) logger.debug({ providerCall: event }, 'provider call');
      metrics.providerAttempt(event);
      hooks.onProviderAttempt?.(event);
    },
  });
  const auth = new AuthClient(http, { authUrl: provider.authUrl, clientId: provider.clientId, clientSecret: provider.clientSecret });
  const appTokens = new ClientCredentialsTokenManager(auth);
  const keyvs: Keyv<never>[] = [];
  const store = <T>(namespace: string): Keyv<T> => {
    const keyv = createKeyv<T>(config.storeUrl, `${options.keyPrefix ?? ''}${namespace}`);
    keyvs.push(keyv as Keyv<never>);
    return keyv;
  };
  const cacheKeyv = createKeyv<unknown>(config.cacheUrl, 'cache');
  keyvs.push(cacheKeyv as Keyv<never>);
  const sessions = new SessionStore(database);
  const connections = new ConnectionStore(database, new TokenCipher(tokenEncryptionKey(config.tokenEncryptionKey, config.storeUrl)));
  const merchantKeys = new MerchantKeys(config.merchantKeys);
  const payments = new PaymentsClient(http, { paymentsUrl: provider.paymentsUrl }, appTokens);
  const payouts = new PayoutClient(http, { payoutUrl: provider.payoutUrl }, appTokens);
  const live = createLiveServices(config, logger, { http, payments, payouts, store, onWebhook: (source, outcome) => metrics.webhookEvent(source, outcome) }, { ...options.live, keyPrefix: options.keyPrefix ?? '' });

  return {
    config,
    logger,
    database,
    http,
    auth,
    data: new DataClient(http, { dataUrl: provider.dataUrl }),
    verification: new VerificationClient(http, { verificationUrl: provider.verificationUrl }),
    payouts,
    payments,
    appTokens,
    userTokens: new UserTokenProvider(connections, auth),
    sessions,
    loginStates: new LoginStateStore(database),
    connections,
    principals: new PrincipalResolver(merchantKeys, sessions, connections, config.appIdentity && new AppTokenVerifier(config.appIdentity)),
    identityEvents: new IdentityEvents(live.bus),
    beneficiaries: new BeneficiaryStore(store('beneficiaries')),
    payoutRecords: new PayoutStore(store('payouts')),
    refundKeys: new RefundKeyStore(store('refund-keys')),
    responseCache: new ResponseCache(cacheKeyv, DEFAULT_CACHE_TTL_SECONDS, metrics.cacheEvents),
    merchantKeys,
    live,
    metrics,
    async checkReady() {
      await Promise.all([database.ping(), ...keyvs.map((keyv) => keyv.get('readiness-probe')), live.checkReady()]);
    },
    async close() {
      // Live first: watchers stop and accepted webhooks finish publishing while the provider client still works.
      await live.close();
      await http.close();
      await Promise.allSettled([...keyvs.map((keyv) => keyv.disconnect()), database.close()]);
    },
  };
}
