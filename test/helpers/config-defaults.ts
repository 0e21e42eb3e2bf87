import { loadConfig } from '../../src/platform/config/config';

/** The configuration's defaults (no variable set), for tests that build a part directly instead of through the gateway. */
const defaults = loadConfig({ NODE_ENV: 'test' });

/** The provider client's timeouts, retries, pool and breakers. */
export const DEFAULT_PROVIDER_CALLS = defaults.limits.providerCalls;
