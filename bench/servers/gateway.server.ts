import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, withProvider, type ProviderConfig } from '../../src/platform/config/config';
import { createGateway } from '../../src/app/gateway';
import { runChild } from './child.runtime';

export interface GatewayInit {
  provider: ProviderConfig;
  /** Extra configuration, e.g. the OTEL_* variables of the tracing scenario. */
  env?: Record<string, string>;
  /** REDIS_KEY_PREFIX of this run, so a bench sharing Redis with tests or another run sees only its own keys and channels. */
  keyPrefix?: string;
}

export interface GatewayInfo {
  url: string;
  merchantKey: string;
  /** GET /metrics needs it as a bearer token (production requires METRICS_TOKEN). */
  metricsToken: string;
}

const MERCHANT_KEY = 'bench-merchant-key-0123456789abcdef';
const METRICS_TOKEN = 'bench-metrics-token-0123456789';

// bankgraph as it runs in production: production mode, silent logs, the default durable store (an SQLite file,
// here in a temporary directory) and the in-memory cache and pubsub. One exception: the limits per principal (the
// rate limit, and the caps on WebSockets and subscriptions) are lifted, because the bench's load comes from one
// session (or one merchant key) where production's comes from many; left on, it would measure the limits refusing
// requests and subscribers, not the gateway answering them.
runChild(async (init) => {
  const { provider, env, keyPrefix } = init as GatewayInit;
  const dataDir = mkdtempSync(join(tmpdir(), 'bankgraph-bench-'));
  const base = loadConfig({
    NODE_ENV: 'production',
    // The provider is the bench's own sandbox process (withProvider below); production wants that said.
    PROVIDER: 'sandbox',
    // The bench signs in through the sandbox bank, as the demos do; production runs that only when asked for.
    IDENTITY: 'bank',
    LOG_LEVEL: 'silent',
    PORT: '0',
    HOST: '127.0.0.1',
    STORE_URL: `sqlite://${join(dataDir, 'gateway.sqlite')}`,
    MERCHANT_KEYS: MERCHANT_KEY,
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    // The bench talks plain HTTP on loopback.
    ALLOW_INSECURE_PUBLIC_URL: 'true',
    METRICS_TOKEN,
    RATE_LIMIT_PER_SECOND: '0',
    ALLOW_NO_RATE_LIMIT: 'true',
    WS_MAX_SOCKETS_PER_PRINCIPAL: '1000000',
    MAX_SUBSCRIPTIONS_PER_PRINCIPAL: '10000000',
    ...(keyPrefix === undefined ? {} : { REDIS_KEY_PREFIX: keyPrefix }),
    ...env,
  });
  const gateway = await createGateway(withProvider(base, provider));
  const info: GatewayInfo = { url: gateway.url, merchantKey: MERCHANT_KEY, metricsToken: METRICS_TOKEN };
  return {
    info,
    async close() {
      try {
        await gateway.close();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
});
