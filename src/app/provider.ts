import type { ResolvedConfig } from '../platform/config/config';
import type { GatewayMetrics } from '../platform/observability/gateway-metrics';
import type { Logger } from '../platform/observability/logger';
import type { Telemetry } from '../platform/observability/telemetry';
import { AuthClient } from '../platform/provider/auth.client';
import { DataClient } from '../platform/provider/data.client';
import { ProviderHttpClient } from '../platform/provider/http.client';
import { PaymentsClient } from '../platform/provider/payments.client';
import { PayoutClient } from '../platform/provider/payout.client';
import { ClientCredentialsTokenManager } from '../platform/provider/token-manager';
import { VerificationClient } from '../platform/provider/verification.client';
import type { Clock } from './clock';

/** The provider's APIs, each a client of the one HTTP client. */
export interface ProviderClients {
  http: ProviderHttpClient;
  auth: AuthClient;
  data: DataClient;
  verification: VerificationClient;
  payouts: PayoutClient;
  payments: PaymentsClient;
  /** The app's client-credentials token, for the merchant's APIs (payouts, payments). */
  appTokens: ClientCredentialsTokenManager;
}

export function createProviderClients(
  config: ResolvedConfig,
  logger: Logger,
  metrics: GatewayMetrics,
  telemetry: Telemetry | undefined,
  clock: Clock,
): ProviderClients {
  const { provider } = config;
  const http = createProviderHttp(config, logger, metrics, telemetry);
  const auth = new AuthClient(http, { authUrl: provider.authUrl, clientId: provider.clientId, clientSecret: provider.clientSecret });
  const appTokens = new ClientCredentialsTokenManager(auth, { now: clock });
  return {
    http,
    auth,
    appTokens,
    data: new DataClient(http, { dataUrl: provider.dataUrl, lazyLists: config.server.fastPaths }),
    verification: new VerificationClient(http, { verificationUrl: provider.verificationUrl }),
    payouts: new PayoutClient(http, { payoutUrl: provider.payoutUrl }, appTokens),
    payments: new PaymentsClient(http, { paymentsUrl: provider.paymentsUrl }, appTokens),
  };
}

/** The one HTTP client of every provider call: signing, retries and breakers, each logged and counted. */
function createProviderHttp(config: ResolvedConfig, logger: Logger, metrics: GatewayMetrics, telemetry: Telemetry | undefined): ProviderHttpClient {
  const { provider } = config;
  return new ProviderHttpClient({
    ...config.limits.providerCalls,
    onCircuitStateChange: (route, state) => {
      logger.warn({ route, state }, 'provider circuit breaker changed state');
      metrics.circuitState(route, state);
    },
    onConnectionCircuitChange: (change) => {
      logger.info(change, "a bank connection's provider circuit breaker changed state");
      metrics.connectionCircuits(change.route, change.openOnRoute);
    },
    signingKey: { keyId: provider.signingKey.keyId, privateKeyPem: provider.signingKey.privateKeyPem },
    telemetry,
    onAttempt: (event) => {
      if (event.retry || event.status === undefined || event.status >= 500) logger.debug({ providerCall: event }, 'provider call');
      metrics.providerAttempt(event);
    },
  });
}
