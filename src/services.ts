import type Keyv from 'keyv';
import { MerchantKeys } from './auth/principal';
import { UserTokenProvider } from './auth/user-token.provider';
import type { ResolvedConfig } from './config';
import { AuthClient } from './datasources/auth.client';
import { DataClient } from './datasources/data.client';
import { ProviderHttpClient, type AttemptEvent } from './datasources/http.client';
import { PaymentsClient } from './datasources/payments.client';
import { PayoutClient } from './datasources/payout.client';
import { ResponseCache } from './datasources/response-cache';
import { ClientCredentialsTokenManager } from './datasources/token-manager';
import { VerificationClient } from './datasources/verification.client';
import type { Logger } from './logger';
import { createKeyv } from './store/keyv.factory';
import { LoginStateStore } from './store/login-state.store';
import { SessionStore } from './store/session.store';
import { BeneficiaryStore } from './store/beneficiary.store';
import { PayoutStore } from './store/payout.store';
import { RefundKeyStore } from './store/refund-key.store';

/** Everything a request may need that outlives the request: clients, stores, caches. Built once per gateway. */
export interface Services {
  config: ResolvedConfig;
  logger: Logger;
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
  /** Verified beneficiaries per user, and who verified each IBAN. */
  beneficiaries: BeneficiaryStore;
  /** Payouts created through the gateway (the provider client is `payouts`). */
  payoutRecords: PayoutStore;
  /** Refund idempotency keys, including the ones the gateway generated. */
  refundKeys: RefundKeyStore;
  responseCache: ResponseCache;
  merchantKeys: MerchantKeys;
  /** Resolves when every store and cache answers; rejects with the first that does not. */
  checkReady(): Promise<void>;
  close(): Promise<void>;
}

export function createServices(config: ResolvedConfig, logger: Logger, hooks: { onProviderAttempt?: (event: AttemptEvent) => void } = {}): Services {
  const { provider } = config;
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
      hooks.onProviderAttempt?.(event);
    },
  });
  const auth = new AuthClient(http, { authUrl: provider.authUrl, clientId: provider.clientId, clientSecret: provider.clientSecret });
  const appTokens = new ClientCredentialsTokenManager(auth);
  const keyvs: Keyv<never>[] = [];
  const store = <T>(namespace: string): Keyv<T> => {
    const keyv = createKeyv<T>(config.storeUrl, namespace);
    keyvs.push(keyv as Keyv<never>);
    return keyv;
  };
  const cacheKeyv = createKeyv<unknown>(config.cacheUrl, 'cache');
  keyvs.push(cacheKeyv as Keyv<never>);
  const sessions = new SessionStore(store('sessions'));

  return {
    config,
    logger,
    http,
    auth,
    data: new DataClient(http, { dataUrl: provider.dataUrl }),
    verification: new VerificationClient(http, { verificationUrl: provider.verificationUrl }),
    payouts: new PayoutClient(http, { payoutUrl: provider.payoutUrl }, appTokens),
    payments: new PaymentsClient(http, { paymentsUrl: provider.paymentsUrl }, appTokens),
    appTokens,
    userTokens: new UserTokenProvider(sessions, auth),
    sessions,
    loginStates: new LoginStateStore(store('login-states')),
    beneficiaries: new BeneficiaryStore(store('beneficiaries')),
    payoutRecords: new PayoutStore(store('payouts')),
    refundKeys: new RefundKeyStore(store('refund-keys')),
    responseCache: new ResponseCache(cacheKeyv),
    merchantKeys: new MerchantKeys(config.merchantKeys),
    async checkReady() {
      await Promise.all(keyvs.map((keyv) => keyv.get('readiness-probe')));
    },
    async close() {
      await http.close();
      await Promise.allSettled(keyvs.map((keyv) => keyv.disconnect()));
    },
  };
}
