import { loadConfig } from '../../src/platform/config/config';

/** The configuration's defaults (no variable set), for tests that build a part directly instead of through the gateway. */
const defaults = loadConfig({ NODE_ENV: 'test' });

/** The provider client's timeouts, retries, pool and breakers. */
export const DEFAULT_PROVIDER_CALLS = defaults.limits.providerCalls;

/** Webhook receipt: body limit, timestamp tolerance, JWKS refetch interval. */
export const DEFAULT_WEBHOOKS = defaults.webhooks;

/** The payout and refund watches' schedule and lease. */
export const DEFAULT_STATUS_WATCH = defaults.watches.status;
