import { z } from 'zod';
import {
  durationSetting,
  durationOf,
  encryptionKey,
  flag,
  integer,
  integerOf,
  isUrl,
  memoryOrRedis,
  merchantKeysOf,
  number,
  oneOf,
  oneOfThese,
  onlyRemote,
  optionalSecret,
  optionalText,
  optionalUrl,
  originList,
  port,
  privateKeyPemOf,
  redisKeyPrefix,
  requiredRemote,
  storeUrl,
  urlListOf,
  urlOf,
  type Setting,
} from './variables';
import { parseDuration } from './duration';

/**
 * Every environment variable the gateway reads, with its default: the one home of both. Grouped as
 * docs/configuration.md groups them; a refusal lists problems in this order.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A duration in the one format, and the older `*_MS` spelling (whole milliseconds) still accepted beside it. */
export const RENAMED_DURATIONS = {
  SANDBOX_LATENCY: 'SANDBOX_LATENCY_MS',
  HTTP_CONNECT_TIMEOUT: 'HTTP_CONNECT_TIMEOUT_MS',
  HTTP_HEADERS_TIMEOUT: 'HTTP_HEADERS_TIMEOUT_MS',
  HTTP_BODY_TIMEOUT: 'HTTP_BODY_TIMEOUT_MS',
  HTTP_BACKOFF_BASE: 'HTTP_BACKOFF_BASE_MS',
  HTTP_BACKOFF_CAP: 'HTTP_BACKOFF_CAP_MS',
  HTTP_MAX_RETRY_AFTER: 'HTTP_MAX_RETRY_AFTER_MS',
  PROVIDER_BREAKER_COOLDOWN: 'PROVIDER_BREAKER_COOLDOWN_MS',
  PAYOUT_APPROVAL_EXPIRY: 'PAYOUT_APPROVAL_EXPIRY_MS',
  PAYOUT_SUBMISSION_EXPIRY: 'PAYOUT_SUBMISSION_EXPIRY_MS',
  DATA_TASK_WEBHOOK_GRACE: 'DATA_TASK_WEBHOOK_GRACE_MS',
  RECONCILE_INTERVAL: 'RECONCILE_INTERVAL_MS',
  RATE_LIMIT_STORE_TIMEOUT: 'RATE_LIMIT_STORE_TIMEOUT_MS',
  OPERATION_TIMEOUT: 'OPERATION_TIMEOUT_MS',
  SHUTDOWN_TIMEOUT: 'SHUTDOWN_TIMEOUT_MS',
  WS_PRINCIPAL_RECHECK: 'WS_PRINCIPAL_RECHECK_MS',
  STREAM_HEARTBEAT: 'STREAM_HEARTBEAT_MS',
} as const;

type DurationName = keyof typeof RENAMED_DURATIONS;

/** Both spellings of one duration: the new one in the one format, the old one as whole milliseconds, same bounds. */
function duration<N extends DurationName>(name: N, bounds: { minMs: number; maxMs: number }) {
  const old = RENAMED_DURATIONS[name];
  return {
    [name]: durationOf(name, bounds).optional(),
    [old]: integerOf(old, { min: bounds.minMs, max: bounds.maxMs }).optional(),
  } as unknown as { [K in N | (typeof RENAMED_DURATIONS)[N]]: Setting<number | undefined> };
}

const CORS_ORIGINS_HINT =
  'exact origins, scheme://host[:port] as a browser sends them (http://localhost:5173, https://app.example.com): no path, no wildcard, lower case, no default port';

const server = {
  NODE_ENV: oneOf('NODE_ENV', ['development', 'production', 'test'], 'development'),
  PORT: port('PORT', 4000),
  HOST: z.string().optional(),
  PUBLIC_URL: urlOf('PUBLIC_URL').optional(),
  ALLOW_INSECURE_PUBLIC_URL: flag('ALLOW_INSECURE_PUBLIC_URL'),
  CORS_ORIGINS: originList('CORS_ORIGINS', CORS_ORIGINS_HINT),
  ALLOWED_ORIGINS: originList('ALLOWED_ORIGINS'),
  FAST_PATHS: oneOf('FAST_PATHS', ['on', 'off'], 'on'),
};

const REMOTE_ONLY = [
  'AUTH_URL',
  'VERIFICATION_URL',
  'PAYOUT_URL',
  'PAYMENTS_URL',
  'DATA_URL',
  'CLIENT_ID',
  'CLIENT_SECRET',
  'SIGNING_KEY_PEM',
  'WEBHOOK_JWKS_URLS',
] as const;

const sandboxProvider = {
  PROVIDER: z.literal('sandbox'),
  SANDBOX_URL: optionalUrl('SANDBOX_URL'),
  SANDBOX_PORT: port('SANDBOX_PORT', 0),
  ...duration('SANDBOX_LATENCY', { minMs: 0, maxMs: 60_000 }),
  SANDBOX_TIME_SCALE: number('SANDBOX_TIME_SCALE', 1, { minExclusive: 0, max: 1_000_000 }),
  ...(Object.fromEntries(REMOTE_ONLY.map((name) => [name, onlyRemote(name)])) as Record<(typeof REMOTE_ONLY)[number], ReturnType<typeof onlyRemote>>),
};

const remoteProvider = {
  PROVIDER: z.literal('remote'),
  AUTH_URL: requiredRemote('AUTH_URL', urlOf('AUTH_URL')),
  VERIFICATION_URL: requiredRemote('VERIFICATION_URL', urlOf('VERIFICATION_URL')),
  PAYOUT_URL: requiredRemote('PAYOUT_URL', urlOf('PAYOUT_URL')),
  PAYMENTS_URL: requiredRemote('PAYMENTS_URL', urlOf('PAYMENTS_URL')),
  DATA_URL: requiredRemote('DATA_URL', urlOf('DATA_URL')),
  CLIENT_ID: requiredRemote<string>('CLIENT_ID'),
  CLIENT_SECRET: requiredRemote<string>('CLIENT_SECRET'),
  SIGNING_KEY_ID: requiredRemote<string>('SIGNING_KEY_ID'),
  SIGNING_KEY_PEM: requiredRemote('SIGNING_KEY_PEM', privateKeyPemOf('SIGNING_KEY_PEM')),
  WEBHOOK_JWKS_URLS: requiredRemote('WEBHOOK_JWKS_URLS', urlListOf('WEBHOOK_JWKS_URLS')),
  SANDBOX_URL: z
    .undefined({ error: 'SANDBOX_URL is only used with PROVIDER=sandbox (the gateway then reads every provider setting from that sandbox)' })
    .optional(),
};

/** The provider client's timeouts, retries, connection pool and breakers, whichever provider it calls. */
const providerClient = {
  ALLOW_INSECURE_PROVIDER_URLS: flag('ALLOW_INSECURE_PROVIDER_URLS'),
  ...duration('HTTP_CONNECT_TIMEOUT', { minMs: 1, maxMs: Number.MAX_SAFE_INTEGER }),
  ...duration('HTTP_HEADERS_TIMEOUT', { minMs: 1, maxMs: Number.MAX_SAFE_INTEGER }),
  ...duration('HTTP_BODY_TIMEOUT', { minMs: 1, maxMs: Number.MAX_SAFE_INTEGER }),
  HTTP_MAX_ATTEMPTS: integer('HTTP_MAX_ATTEMPTS', 3, { min: 1, max: 10 }),
  ...duration('HTTP_BACKOFF_BASE', { minMs: 0, maxMs: Number.MAX_SAFE_INTEGER }),
  ...duration('HTTP_BACKOFF_CAP', { minMs: 0, maxMs: Number.MAX_SAFE_INTEGER }),
  ...duration('HTTP_MAX_RETRY_AFTER', { minMs: 0, maxMs: Number.MAX_SAFE_INTEGER }),
  HTTP_CONNECTIONS_PER_ORIGIN: integer('HTTP_CONNECTIONS_PER_ORIGIN', 128, { min: 1 }),
  PROVIDER_MAX_BODY_BYTES: integer('PROVIDER_MAX_BODY_BYTES', 16 * 1024 * 1024, { min: 1_024, max: 1024 * 1024 * 1024 }),
  PROVIDER_BREAKER_FAILURES: integer('PROVIDER_BREAKER_FAILURES', 5, { min: 1, max: 1_000 }),
  ...duration('PROVIDER_BREAKER_COOLDOWN', { minMs: 1, maxMs: 600_000 }),
  PROVIDER_BREAKER_ROUTE_CONNECTIONS: integer('PROVIDER_BREAKER_ROUTE_CONNECTIONS', 3, { min: 1, max: 1_000 }),
};

const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

/** Whole seconds (the older spelling) or the one duration format, never below a second. */
const tokenAge = z.string().transform((value, ctx) => {
  const seconds = /^\s*\d+\s*$/.test(value) ? Number(value) : (parseDuration(value) ?? Number.NaN) / 1_000;
  if (Number.isSafeInteger(seconds) && seconds >= 60 && seconds <= 30 * 86_400) return seconds;
  ctx.issues.push({
    code: 'custom',
    input: value,
    message: `AUTH_MAX_TOKEN_AGE must be a duration from 60 s to 30 d: whole seconds or a number with s, m, h or d (e.g. 24h); got ${JSON.stringify(value)}`,
  });
  return z.NEVER;
});

const algorithms = z.string().transform((value, ctx) => {
  const list = value
    .split(',')
    .map((alg) => alg.trim())
    .filter(Boolean);
  if (list.length > 0 && list.every((alg) => (JWT_ALGORITHMS as readonly string[]).includes(alg))) return list;
  ctx.issues.push({
    code: 'custom',
    input: value,
    message: `AUTH_ALGORITHMS must be a comma-separated list of ${JWT_ALGORITHMS.join(', ')}; got ${JSON.stringify(value)}`,
  });
  return z.NEVER;
});

const identity = {
  IDENTITY: oneOfThese('IDENTITY', ['app', 'bank']).optional(),
  AUTH_JWKS_URL: optionalUrl('AUTH_JWKS_URL'),
  AUTH_ISSUER: optionalText(),
  AUTH_AUDIENCE: optionalText(),
  AUTH_ALGORITHMS: algorithms.optional(),
  AUTH_MAX_TOKEN_AGE: tokenAge.optional(),
  MERCHANT_KEYS: merchantKeysOf('MERCHANT_KEYS').optional(),
  TOKEN_ENCRYPTION_KEY: encryptionKey('TOKEN_ENCRYPTION_KEY'),
};

const store = {
  STORE_URL: storeUrl('STORE_URL', 'sqlite://./data/gateway.sqlite'),
  CACHE_URL: memoryOrRedis('CACHE_URL'),
  PUBSUB_URL: memoryOrRedis('PUBSUB_URL'),
  REDIS_KEY_PREFIX: redisKeyPrefix('REDIS_KEY_PREFIX', 'bankgraph:'),
};

const money = {
  PAYOUT_MAX_MINOR: integer('PAYOUT_MAX_MINOR', 100_000, { min: 1 }),
  PAYOUT_DAILY_MAX_MINOR: integer('PAYOUT_DAILY_MAX_MINOR', 500_000, { min: 1 }),
  PAYOUT_BENEFICIARY_DAILY_MAX_MINOR: integer('PAYOUT_BENEFICIARY_DAILY_MAX_MINOR', 500_000, { min: 1 }),
  PAYOUT_APPROVAL_ABOVE_MINOR: integer('PAYOUT_APPROVAL_ABOVE_MINOR', 50_000, { min: 0 }),
  ...duration('PAYOUT_APPROVAL_EXPIRY', { minMs: 1_000, maxMs: Number.MAX_SAFE_INTEGER }),
  ...duration('PAYOUT_SUBMISSION_EXPIRY', { minMs: 1_000, maxMs: Number.MAX_SAFE_INTEGER }),
  ...duration('DATA_TASK_WEBHOOK_GRACE', { minMs: 0, maxMs: Number.MAX_SAFE_INTEGER }),
  ...duration('RECONCILE_INTERVAL', { minMs: 100, maxMs: DAY }),
  DATA_TASKS_MAX_PER_USER: integer('DATA_TASKS_MAX_PER_USER', 50, { min: 1, max: 100_000 }),
  DATA_TASK_RESULTS_MAX_BYTES: integer('DATA_TASK_RESULTS_MAX_BYTES', 1024 * 1024, { min: 1_024, max: 256 * 1024 * 1024 }),
};

const limits = {
  GRAPHQL_MAX_DEPTH: integer('GRAPHQL_MAX_DEPTH', 15, { min: 1, max: 1_000 }),
  GRAPHQL_MAX_ALIASES: integer('GRAPHQL_MAX_ALIASES', 30, { min: 0, max: 10_000 }),
  GRAPHQL_MAX_DIRECTIVES: integer('GRAPHQL_MAX_DIRECTIVES', 50, { min: 0, max: 10_000 }),
  GRAPHQL_MAX_TOKENS: integer('GRAPHQL_MAX_TOKENS', 5_000, { min: 100, max: 1_000_000 }),
  GRAPHQL_MAX_COST: integer('GRAPHQL_MAX_COST', 20_000, { min: 1, max: 100_000_000 }),
  GRAPHQL_MAX_BODY_BYTES: integer('GRAPHQL_MAX_BODY_BYTES', 100 * 1024, { min: 1_024, max: 64 * 1024 * 1024 }),
  RATE_LIMIT_PER_SECOND: number('RATE_LIMIT_PER_SECOND', 20, { min: 0, max: 1_000_000 }),
  RATE_LIMIT_BURST: integer('RATE_LIMIT_BURST', 60, { min: 1, max: 1_000_000 }),
  WEBHOOK_RATE_LIMIT_PER_SECOND: number('WEBHOOK_RATE_LIMIT_PER_SECOND', 50, { min: 0, max: 1_000_000 }),
  WEBHOOK_RATE_LIMIT_BURST: integer('WEBHOOK_RATE_LIMIT_BURST', 200, { min: 1, max: 1_000_000 }),
  ...duration('RATE_LIMIT_STORE_TIMEOUT', { minMs: 10, maxMs: 10_000 }),
  ALLOW_NO_RATE_LIMIT: flag('ALLOW_NO_RATE_LIMIT'),
  ...duration('OPERATION_TIMEOUT', { minMs: 100, maxMs: 600_000 }),
  ...duration('SHUTDOWN_TIMEOUT', { minMs: 0, maxMs: 600_000 }),
};

const live = {
  SESSION_IDLE_TIMEOUT: durationOf('SESSION_IDLE_TIMEOUT', { minMs: 1_000, maxMs: 365 * DAY }).optional(),
  ...duration('WS_PRINCIPAL_RECHECK', { minMs: 100, maxMs: HOUR }),
  WS_MAX_SUBSCRIPTIONS_PER_SOCKET: integer('WS_MAX_SUBSCRIPTIONS_PER_SOCKET', 100, { min: 1, max: 1_000_000 }),
  MAX_SUBSCRIPTIONS_PER_PRINCIPAL: integer('MAX_SUBSCRIPTIONS_PER_PRINCIPAL', 1_000, { min: 1, max: 10_000_000 }),
  WS_MAX_SOCKETS_PER_PRINCIPAL: integer('WS_MAX_SOCKETS_PER_PRINCIPAL', 50, { min: 1, max: 1_000_000 }),
  ...duration('STREAM_HEARTBEAT', { minMs: 50, maxMs: HOUR }),
};

/** Webhook receipt: the largest body read, the signed timestamp's tolerance, how often an unknown key may refetch a JWKS. */
const webhooks = {
  WEBHOOK_MAX_BODY_BYTES: integer('WEBHOOK_MAX_BODY_BYTES', 64 * 1024, { min: 1_024, max: 16 * 1024 * 1024 }),
  WEBHOOK_MAX_SKEW: durationSetting('WEBHOOK_MAX_SKEW', 5 * 60_000, { minMs: 1_000, maxMs: HOUR }),
  WEBHOOK_JWKS_MIN_REFETCH: durationSetting('WEBHOOK_JWKS_MIN_REFETCH', 5_000, { minMs: 100, maxMs: HOUR }),
};

/** The watches of what the provider sends no news of while someone subscribes (payouts, refunds). */
const watches = {
  STATUS_WATCH_INITIAL_DELAY: durationSetting('STATUS_WATCH_INITIAL_DELAY', 500, { minMs: 10, maxMs: HOUR }),
  STATUS_WATCH_MAX_DELAY: durationSetting('STATUS_WATCH_MAX_DELAY', 10_000, { minMs: 10, maxMs: HOUR }),
  STATUS_WATCH_BACKOFF_FACTOR: number('STATUS_WATCH_BACKOFF_FACTOR', 2, { min: 1, max: 10 }),
  STATUS_WATCH_LEASE_TTL: durationSetting('STATUS_WATCH_LEASE_TTL', 30_000, { minMs: 100, maxMs: DAY }),
  REFUND_STATE_REUSE: durationSetting('REFUND_STATE_REUSE', 1_000, { minMs: 0, maxMs: 60_000 }),
};

const OTEL_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

/** `key1=value1,key2=value2` with percent-encoded values; the message names the variable, never what it holds (a credential). */
function keyValueList(name: string): Setting<Record<string, string>> {
  const list = z.string().transform((value, ctx) => {
    const result: Record<string, string> = {};
    for (const part of value.trim() === '' ? [] : value.split(',')) {
      const at = part.indexOf('=');
      const key = part.slice(0, at).trim();
      if (at <= 0 || key === '') {
        ctx.issues.push({ code: 'custom', input: name, message: `${name} must be a comma-separated list of key=value pairs` });
        return z.NEVER;
      }
      try {
        result[key] = decodeURIComponent(part.slice(at + 1).trim());
      } catch {
        ctx.issues.push({ code: 'custom', input: name, message: `${name} has a value that is not valid percent-encoding (key ${JSON.stringify(key)})` });
        return z.NEVER;
      }
    }
    return result;
  });
  return list.optional().transform((value) => value ?? {});
}

const otlpUrl = (name: string, message: string) =>
  z
    .string()
    .refine((value) => isUrl(value, ['http:', 'https:']), {
      error: (issue) => `${name} must be an absolute http(s) URL${message}; got ${JSON.stringify(issue.input)}`,
    })
    .optional();

/** The gateway ships only the OTLP/HTTP JSON exporter, which ignores the protocol variables: anything else is refused rather than silently not honoured. */
const otlpProtocol = (name: string) =>
  z
    .enum(['http/json', 'http/protobuf'], {
      error: (issue) =>
        `${name} must be http/json (the gateway exports OTLP over HTTP with JSON; collectors accept it on the http/protobuf port); got ${JSON.stringify(issue.input)}`,
    })
    .optional();

/**
 * The OTEL_* variables the gateway reads itself: whether tracing is on (ours to decide), OTEL_TRUST_INBOUND_SAMPLING
 * (ours), and what it hands the SDK as options, because the SDK reads only process.env and loadConfig may be given
 * another environment. Each is checked here since the SDK ignores a bad value without a word; every other OTEL_*
 * variable (timeouts, compression, certificates, batching, span limits) is left to the SDK.
 */
const observability = {
  LOG_LEVEL: oneOfThese('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(),
  METRICS_TOKEN: optionalSecret('METRICS_TOKEN'),
  OTEL_SDK_DISABLED: flag('OTEL_SDK_DISABLED'),
  OTEL_TRACES_EXPORTER: oneOfThese('OTEL_TRACES_EXPORTER', ['otlp', 'console', 'none']).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', " (the collector's OTLP/HTTP address, e.g. http://collector:4318)"),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlpUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ''),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol('OTEL_EXPORTER_OTLP_PROTOCOL'),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'),
  OTEL_TRACES_SAMPLER: oneOf('OTEL_TRACES_SAMPLER', OTEL_SAMPLERS, 'parentbased_always_on'),
  OTEL_TRACES_SAMPLER_ARG: number('OTEL_TRACES_SAMPLER_ARG', 1, { min: 0, max: 1 }),
  OTEL_EXPORTER_OTLP_HEADERS: keyValueList('OTEL_EXPORTER_OTLP_HEADERS'),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: keyValueList('OTEL_EXPORTER_OTLP_TRACES_HEADERS'),
  OTEL_SERVICE_NAME: optionalText(),
  OTEL_RESOURCE_ATTRIBUTES: keyValueList('OTEL_RESOURCE_ATTRIBUTES'),
  OTEL_TRUST_INBOUND_SAMPLING: flag('OTEL_TRUST_INBOUND_SAMPLING'),
};

const persistedDocuments = {
  PERSISTED_DOCUMENTS: oneOf('PERSISTED_DOCUMENTS', ['off', 'allow', 'only'], 'off'),
  PERSISTED_DOCUMENTS_MANIFEST: optionalText(),
  PERSISTED_DOCUMENTS_APQ_MAX_DOCUMENTS: integer('PERSISTED_DOCUMENTS_APQ_MAX_DOCUMENTS', 200, { min: 0, max: 1_000_000 }),
  PERSISTED_DOCUMENTS_APQ_MAX_BYTES: integer('PERSISTED_DOCUMENTS_APQ_MAX_BYTES', 1024 * 1024, { min: 0, max: 1024 * 1024 * 1024 }),
};

const mcp = {
  MCP_MUTATIONS: oneOf('MCP_MUTATIONS', ['off', 'propose'], 'off'),
  MCP_ALLOW_ARBITRARY_OPERATIONS: flag('MCP_ALLOW_ARBITRARY_OPERATIONS'),
  MCP_AUDIENCE: optionalText(),
};

const common = z.object({
  ...server,
  ...providerClient,
  ...identity,
  ...store,
  ...money,
  ...limits,
  ...live,
  ...webhooks,
  ...watches,
  ...observability,
  ...persistedDocuments,
  ...mcp,
});

/** PROVIDER picks the provider's variables: the sandbox's own settings, or the remote provider's addresses and credentials. */
const provider = z.discriminatedUnion('PROVIDER', [z.object(sandboxProvider), z.object(remoteProvider)], {
  error: (issue) => `PROVIDER must be one of sandbox, remote; got ${JSON.stringify((issue.input as { PROVIDER?: unknown } | undefined)?.PROVIDER)}`,
});

export const variablesSchema = z.intersection(common, provider);

export type Variables = z.output<typeof variablesSchema>;

export type Env = Record<string, string | undefined>;

/** Every variable's name in the order above (the order problems are listed in). */
export const VARIABLE_NAMES: readonly string[] = [
  ...new Set([
    ...Object.keys(server),
    ...Object.keys(sandboxProvider),
    ...Object.keys(remoteProvider),
    ...Object.keys(providerClient),
    ...Object.keys(identity),
    ...Object.keys(store),
    ...Object.keys(money),
    ...Object.keys(limits),
    ...Object.keys(live),
    ...Object.keys(webhooks),
    ...Object.keys(watches),
    ...Object.keys(observability),
    ...Object.keys(persistedDocuments),
    ...Object.keys(mcp),
  ]),
];
