import { createPrivateKey, randomBytes } from 'node:crypto';
import { isAbsolute } from 'node:path';

/**
 * The only reader of process.env. Every variable is validated here, and a bad one stops start-up with a message
 * that names it and says what it accepts; every default is chosen so that `npm start` works with no configuration.
 */

export type NodeEnv = 'development' | 'production' | 'test';

export interface ProviderConfig {
  authUrl: string;
  verificationUrl: string;
  payoutUrl: string;
  /** The spec's {base_url}: the payments API, where refunds live. */
  paymentsUrl: string;
  dataUrl: string;
  clientId: string;
  clientSecret: string;
  signingKey: { keyId: string; privateKeyPem: string };
  /** Webhook signatures are trusted only with keys from these JWKS addresses. */
  webhookJwksUrls: string[];
}

export interface SandboxConfig {
  /** SANDBOX_URL: a standalone sandbox (`npm run sandbox`) to use instead of starting one in this process. */
  url: string | undefined;
  /** 0 (the default): a free port, printed at start. */
  port: number;
  latencyMs: number;
  timeScale: number;
}

export interface HttpConfig {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** Attempts in all, the first included. */
  maxAttempts: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  /** Longest Retry-After the gateway will wait out before giving up with UPSTREAM_RATE_LIMITED. */
  maxRetryAfterMs: number;
  connectionsPerOrigin: number;
  /** Largest provider answer read; a larger one is UPSTREAM_ERROR. */
  maxBodyBytes: number;
  /** Consecutive failed sends on one provider route (of one bank connection) that open its circuit breaker, and how long it stays open. */
  breakerFailures: number;
  breakerCooldownMs: number;
  /** Distinct connections whose circuits open on a route, with no success between, that open it for everyone. */
  breakerRouteConnections: number;
}

/** Payout policy and reconciliation (docs/money.md); amounts in minor units, per currency. */
export interface MoneyConfig {
  /** The largest single payout, for every caller. */
  payoutMaxMinor: number;
  /** A user's payouts per currency over a rolling 24 h; failed, rejected, declined and expired ones do not count. */
  payoutDailyMaxMinor: number;
  /** Every user's payouts to one IBAN per currency over a rolling 24 h (merchant keys' own payouts aside). */
  payoutBeneficiaryDailyMaxMinor: number;
  /** A session's payout that takes the user's rolling 24 h total above this waits for a merchant key's approvePayout. */
  payoutApprovalAboveMinor: number;
  /** A payout still awaiting approval this long after it was recorded is marked expired and can no longer be approved. */
  payoutApprovalExpiryMs: number;
  /** A payout the provider never confirmed is marked expired this long after it was recorded. */
  payoutSubmissionExpiryMs: number;
  /** A data task with no webhook this long after it started is fetched by the reconciler. */
  dataTaskWebhookGraceMs: number;
  /** How often the reconciler runs (on whichever instance holds its lease). */
  reconcileIntervalMs: number;
}

/** What the gateway keeps of a user's async data tasks (docs/operations.md, "Data tasks"). */
export interface DataTasksConfig {
  /** Tasks one user may have open or stored (started within the last 24 h); one more is refused. */
  maxPerUser: number;
  /** The largest results (serialised JSON, bytes) stored for one task; larger fail the task. */
  resultsMaxBytes: number;
}

/** Per-operation limits, the same for HTTP and WebSocket (docs/operations.md, "Operation limits"). */
export interface OperationLimitsConfig {
  maxDepth: number;
  maxAliases: number;
  maxDirectives: number;
  maxTokens: number;
  maxCost: number;
  /** Largest GraphQL request body over HTTP, and largest WebSocket message. */
  maxBodyBytes: number;
}

/**
 * A token bucket per principal (user, merchant key, or client IP when anonymous), shared by the instances through
 * Redis when CACHE_URL is Redis; `perSecond` 0 turns it off (outside production). Webhook deliveries have a bucket per source address.
 */
export interface RateLimitConfig {
  perSecond: number;
  burst: number;
  webhookPerSecond: number;
  webhookBurst: number;
  /** How long a decision waits for the shared buckets (Redis) before this instance decides alone. */
  storeTimeoutMs: number;
}

/** Sessions and WebSockets: how long they live, how often a socket's owner is checked again, and the caps on live work (docs/security.md). */
export interface LiveLimitsConfig {
  /** A session not used for this long ends, whatever its lifetime says. */
  sessionIdleTimeoutMs: number;
  /** How often every open socket's principal is checked again in the store (expired, idled out, revoked). */
  principalRecheckMs: number;
  maxSubscriptionsPerSocket: number;
  /** Per principal (a user, a merchant key, an anonymous address) on one instance. */
  maxSubscriptionsPerPrincipal: number;
  maxSocketsPerPrincipal: number;
  /** How often an idle SSE or multipart subscription stream gets a heartbeat, so proxies keep it open. */
  streamHeartbeatMs: number;
}

/** Trusted documents (persisted operations) and APQ; docs/api.md, "Persisted documents". */
export interface PersistedDocumentsConfig {
  /** off: text only; allow: text, manifest hashes and APQ; only: manifest documents only. */
  mode: 'off' | 'allow' | 'only';
  /** JSON of id -> document (GraphQL Code Generator client preset, Relay, or Apollo's manifest format). */
  manifestPath: string | undefined;
  /** What one principal may register by APQ over 24 h (mode allow). */
  apqQuota: { documents: number; bytes: number };
}

/**
 * OpenTelemetry tracing from the standard OTEL_* variables. `exporter` undefined means tracing is off: no SDK is
 * loaded and every span call is the API's no-op.
 */
export interface TelemetryConfig {
  exporter: 'otlp' | 'console' | undefined;
  /** Full OTLP/HTTP traces URL (…/v1/traces). */
  tracesUrl: string;
  /** Sent with every export (a collector's API key): a secret, never logged. */
  headers: Record<string, string>;
  serviceName: string;
  /** Extra resource attributes from OTEL_RESOURCE_ATTRIBUTES. */
  resourceAttributes: Record<string, string>;
  sampler: 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';
  /** The ratio for the traceidratio samplers. */
  samplerRatio: number;
  /** OTEL_TRUST_INBOUND_SAMPLING: an inbound `traceparent`'s sampled flag decides (else the root sampler does). */
  trustInboundSampling: boolean;
}

export interface Config {
  nodeEnv: NodeEnv;
  port: number;
  host: string;
  /** How the provider and browsers reach this gateway; undefined means "the address it ends up listening on". */
  publicUrl: string | undefined;
  /**
   * CORS_ORIGINS and its older name ALLOWED_ORIGINS together: the browser origins besides the gateway's own whose
   * pages may call it with credentials, over HTTP (CORS), WebSocket and the HTTP streams alike.
   */
  corsOrigins: string[];
  /** ALLOWED_ORIGINS as given (merged into corsOrigins); the gateway says at start that it is now CORS_ORIGINS. */
  allowedOrigins: string[];
  /** `sandbox` until the embedded sandbox is started and its addresses are known (see withSandbox). */
  provider: ProviderConfig | 'sandbox';
  /** What PROVIDER said; unlike `provider`, it survives withProvider (the playground words its sign-in link by it). */
  providerKind: 'sandbox' | 'remote';
  sandbox: SandboxConfig;
  storeUrl: string;
  /** TOKEN_ENCRYPTION_KEY (32 bytes); undefined outside production means a generated key kept beside the store. */
  tokenEncryptionKey: Buffer | undefined;
  /** App identity (AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE): requests carry the app's OIDC access token. */
  appIdentity: AppIdentityConfig | undefined;
  cacheUrl: string;
  pubsubUrl: string;
  /** REDIS_KEY_PREFIX: begins every key and channel the gateway writes to Redis, so deployments sharing one Redis never meet. */
  redisKeyPrefix: string;
  /** The payout policy and the reconciler's windows (docs/money.md). */
  money: MoneyConfig;
  dataTasks: DataTasksConfig;
  merchantKeys: string[];
  /** True when MERCHANT_KEYS was not set and a key was made up at start (so index.ts prints it). */
  merchantKeysGenerated: boolean;
  http: HttpConfig;
  limits: OperationLimitsConfig;
  rateLimit: RateLimitConfig;
  live: LiveLimitsConfig;
  /** FAST_PATHS: false sends every subscriber's results the ordinary way (src/platform/live/fan-out.ts). */
  fastPaths: boolean;
  /** How long a shutdown waits for in-flight requests before closing their connections. */
  shutdownTimeoutMs: number;
  /** Every query and mutation's deadline: provider calls and their retries spend only what is left of it. */
  operationTimeoutMs: number;
  /** When set, GET /metrics needs `Authorization: Bearer <this>`; production requires it. */
  metricsToken: string | undefined;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  persistedDocuments: PersistedDocumentsConfig;
  telemetry: TelemetryConfig;
  /** The MCP endpoint at /mcp (docs/agents.md). */
  mcp: McpConfig;
}

/** What agents may do through /mcp: mutations off or propose-only, and whether a document of their own is run. */
export interface McpConfig {
  /** MCP_MUTATIONS: off offers read tools only; propose adds propose_payout, whose payouts always await approval. */
  mutations: 'off' | 'propose';
  /** MCP_ALLOW_ARBITRARY_OPERATIONS: a tool that runs any document the agent sends; refused in production. */
  allowArbitraryOperations: boolean;
  /** MCP_AUDIENCE (app identity): the `aud` an app access token must name on /mcp, instead of AUTH_AUDIENCE. */
  audience: string | undefined;
}

export interface AppIdentityConfig {
  jwksUrl: string;
  issuer: string;
  audience: string;
  /** Accepted JWS algorithms; never `none`. */
  algorithms: string[];
  /** AUTH_MAX_TOKEN_AGE: a token issued (`iat`) longer ago than this is refused, whatever its `exp` says. */
  maxTokenAgeSeconds: number;
}

/** Asymmetric JWS algorithms only: with a JWKS, an HMAC "key" would be public. */
/** What CORS_ORIGINS accepts, said whole in its refusal: an Origin header is matched as a string, so near misses never match. */
const CORS_ORIGINS_HINT =
  'exact origins, scheme://host[:port] as a browser sends them (http://localhost:5173, https://app.example.com): no path, no wildcard, lower case, no default port';

const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

export type ResolvedConfig = Config & { provider: ProviderConfig };

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  }
}

type Env = Record<string, string | undefined>;

/**
 * What a client tool on this machine (`npm run sandbox:login`) learns from the environment about where the gateway
 * runs: PUBLIC_URL and PORT when they are set, nothing else (the rest of the configuration is the gateway's).
 */
export function loadGatewayAddress(env: Env = process.env): Readonly<{ publicUrl?: string; port?: number }> {
  const problems: string[] = [];
  const read = new Reader(env, problems);
  const address = {
    publicUrl: env.PUBLIC_URL === undefined ? undefined : read.url('PUBLIC_URL'),
    port: env.PORT === undefined ? undefined : read.port('PORT', 4000),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return address;
}

/**
 * Where this OS user's development tools keep runtime files (the registry of running gateways): XDG_RUNTIME_DIR, a
 * folder the XDG spec reserves for the user alone, when it is an absolute path (the spec says to ignore any other).
 */
export function loadRuntimeDir(env: Env = process.env): string | undefined {
  const dir = env.XDG_RUNTIME_DIR?.trim();
  return dir && isAbsolute(dir) ? dir : undefined;
}

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const problems: string[] = [];
  const read = new Reader(env, problems);

  const nodeEnv = read.oneOf('NODE_ENV', ['development', 'production', 'test'] as const, 'development');
  const port = read.port('PORT', 4000);
  const providerKind = read.oneOf('PROVIDER', ['sandbox', 'remote'] as const, 'sandbox');
  const sandbox: SandboxConfig = {
    url: env.SANDBOX_URL?.trim() ? read.url('SANDBOX_URL') : undefined,
    port: read.port('SANDBOX_PORT', 0),
    latencyMs: read.integer('SANDBOX_LATENCY_MS', 0, { min: 0, max: 60_000 }),
    timeScale: read.number('SANDBOX_TIME_SCALE', 1, { minExclusive: 0, max: 1_000_000 }),
  };

  const provider = readProvider(env, read, problems, providerKind, sandbox);

  if (nodeEnv === 'production') refuseDevelopmentDefaults(env, problems);
  const allowInsecurePublicUrl = read.oneOf('ALLOW_INSECURE_PUBLIC_URL', ['true', 'false'] as const, 'false') === 'true';
  const allowInsecureProviderUrls = read.oneOf('ALLOW_INSECURE_PROVIDER_URLS', ['true', 'false'] as const, 'false') === 'true';

  const merchantKeysRaw = env.MERCHANT_KEYS;
  const merchantKeys = merchantKeysRaw === undefined ? [randomBytes(24).toString('base64url')] : read.merchantKeys('MERCHANT_KEYS');

  const allowedOrigins = read.originList('ALLOWED_ORIGINS');
  const config: Config = {
    nodeEnv,
    port,
    // Reachable from other machines only where that is the point (production, a container) or asked for.
    host: env.HOST ?? (nodeEnv === 'production' ? '0.0.0.0' : '127.0.0.1'),
    publicUrl: env.PUBLIC_URL === undefined ? (port === 0 ? undefined : `http://localhost:${port}`) : read.url('PUBLIC_URL'),
    corsOrigins: [...new Set([...read.originList('CORS_ORIGINS', CORS_ORIGINS_HINT), ...allowedOrigins])],
    allowedOrigins,
    provider,
    providerKind,
    sandbox,
    storeUrl: read.storeUrl('STORE_URL', 'sqlite://./data/gateway.sqlite'),
    tokenEncryptionKey: read.encryptionKey('TOKEN_ENCRYPTION_KEY', nodeEnv === 'production'),
    appIdentity: read.appIdentity(nodeEnv),
    cacheUrl: read.memoryOrRedis('CACHE_URL'),
    pubsubUrl: read.memoryOrRedis('PUBSUB_URL'),
    redisKeyPrefix: read.redisKeyPrefix('REDIS_KEY_PREFIX', 'bankgraph:'),
    money: {
      payoutMaxMinor: read.integer('PAYOUT_MAX_MINOR', 100_000, { min: 1, max: Number.MAX_SAFE_INTEGER }),
      payoutDailyMaxMinor: read.integer('PAYOUT_DAILY_MAX_MINOR', 500_000, { min: 1, max: Number.MAX_SAFE_INTEGER }),
      payoutBeneficiaryDailyMaxMinor: read.integer('PAYOUT_BENEFICIARY_DAILY_MAX_MINOR', 500_000, { min: 1, max: Number.MAX_SAFE_INTEGER }),
      payoutApprovalAboveMinor: read.integer('PAYOUT_APPROVAL_ABOVE_MINOR', 50_000, { min: 0, max: Number.MAX_SAFE_INTEGER }),
      payoutApprovalExpiryMs: read.integer('PAYOUT_APPROVAL_EXPIRY_MS', 72 * 60 * 60 * 1000, { min: 1_000 }),
      payoutSubmissionExpiryMs: read.integer('PAYOUT_SUBMISSION_EXPIRY_MS', 24 * 60 * 60 * 1000, { min: 1_000 }),
      dataTaskWebhookGraceMs: read.integer('DATA_TASK_WEBHOOK_GRACE_MS', 30_000, { min: 0 }),
      reconcileIntervalMs: read.integer('RECONCILE_INTERVAL_MS', 10_000, { min: 100, max: 24 * 60 * 60 * 1000 }),
    },
    dataTasks: {
      maxPerUser: read.integer('DATA_TASKS_MAX_PER_USER', 50, { min: 1, max: 100_000 }),
      resultsMaxBytes: read.integer('DATA_TASK_RESULTS_MAX_BYTES', 1024 * 1024, { min: 1_024, max: 256 * 1024 * 1024 }),
    },
    merchantKeys,
    merchantKeysGenerated: merchantKeysRaw === undefined,
    http: readHttp(read),
    limits: {
      maxDepth: read.integer('GRAPHQL_MAX_DEPTH', 15, { min: 1, max: 1_000 }),
      maxAliases: read.integer('GRAPHQL_MAX_ALIASES', 30, { min: 0, max: 10_000 }),
      maxDirectives: read.integer('GRAPHQL_MAX_DIRECTIVES', 50, { min: 0, max: 10_000 }),
      maxTokens: read.integer('GRAPHQL_MAX_TOKENS', 5_000, { min: 100, max: 1_000_000 }),
      maxCost: read.integer('GRAPHQL_MAX_COST', 20_000, { min: 1, max: 100_000_000 }),
      maxBodyBytes: read.integer('GRAPHQL_MAX_BODY_BYTES', 100 * 1024, { min: 1_024, max: 64 * 1024 * 1024 }),
    },
    rateLimit: {
      perSecond: read.number('RATE_LIMIT_PER_SECOND', 20, { min: 0, max: 1_000_000 }),
      burst: read.integer('RATE_LIMIT_BURST', 60, { min: 1, max: 1_000_000 }),
      webhookPerSecond: read.number('WEBHOOK_RATE_LIMIT_PER_SECOND', 50, { min: 0, max: 1_000_000 }),
      webhookBurst: read.integer('WEBHOOK_RATE_LIMIT_BURST', 200, { min: 1, max: 1_000_000 }),
      storeTimeoutMs: read.integer('RATE_LIMIT_STORE_TIMEOUT_MS', 250, { min: 10, max: 10_000 }),
    },
    live: {
      sessionIdleTimeoutMs: read.duration('SESSION_IDLE_TIMEOUT', 12 * 3600 * 1000, { minMs: 1_000, maxMs: 365 * 24 * 3600 * 1000 }),
      principalRecheckMs: read.integer('WS_PRINCIPAL_RECHECK_MS', 60_000, { min: 100, max: 3600 * 1000 }),
      maxSubscriptionsPerSocket: read.integer('WS_MAX_SUBSCRIPTIONS_PER_SOCKET', 100, { min: 1, max: 1_000_000 }),
      maxSubscriptionsPerPrincipal: read.integer('MAX_SUBSCRIPTIONS_PER_PRINCIPAL', 1_000, { min: 1, max: 10_000_000 }),
      maxSocketsPerPrincipal: read.integer('WS_MAX_SOCKETS_PER_PRINCIPAL', 50, { min: 1, max: 1_000_000 }),
      streamHeartbeatMs: read.integer('STREAM_HEARTBEAT_MS', 12_000, { min: 50, max: 3600 * 1000 }),
    },
    fastPaths: read.oneOf('FAST_PATHS', ['on', 'off'] as const, 'on') === 'on',
    shutdownTimeoutMs: read.integer('SHUTDOWN_TIMEOUT_MS', 10_000, { min: 0, max: 600_000 }),
    operationTimeoutMs: read.integer('OPERATION_TIMEOUT_MS', 10_000, { min: 100, max: 600_000 }),
    metricsToken: read.optionalSecret('METRICS_TOKEN'),
    logLevel: read.oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, nodeEnv === 'test' ? 'silent' : 'info'),
    persistedDocuments: readPersistedDocuments(env, read, problems),
    telemetry: readTelemetry(env, read, problems),
    mcp: {
      mutations: read.oneOf('MCP_MUTATIONS', ['off', 'propose'] as const, 'off'),
      allowArbitraryOperations: read.oneOf('MCP_ALLOW_ARBITRARY_OPERATIONS', ['true', 'false'] as const, 'false') === 'true',
      audience: env.MCP_AUDIENCE?.trim() || undefined,
    },
  };

  if (nodeEnv === 'production') {
    refuseInsecureProduction(config, allowInsecurePublicUrl, problems);
    refuseInsecureProviderUrls(config, allowInsecureProviderUrls, problems);
    refuseWeakMerchantKeys(env, config.merchantKeys, problems);
    if (read.oneOf('ALLOW_NO_RATE_LIMIT', ['true', 'false'] as const, 'false') !== 'true') refuseRateLimitsOff(config.rateLimit, problems);
  }
  refuseMcpMisuse(config, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/** Agents run only vetted tools in production, and MCP_AUDIENCE means something only where app tokens are checked. */
function refuseMcpMisuse(config: Config, problems: string[]): void {
  if (config.nodeEnv === 'production' && config.mcp.allowArbitraryOperations) {
    problems.push('MCP_ALLOW_ARBITRARY_OPERATIONS=true is refused with NODE_ENV=production: agents run only the vetted tools of operations/mcp/ there');
  }
  if (config.mcp.audience !== undefined && config.appIdentity === undefined) {
    problems.push(
      'MCP_AUDIENCE is only used with app identity (AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE): it is the audience of the app tokens agents present on /mcp',
    );
  }
}

/**
 * Defaults that make `npm start` work with no configuration are unsafe in production: a merchant key made up at
 * start (and printed to stdout), and an embedded sandbox with its own made-up client secret and signing key taking
 * the place of the provider. Production must choose these itself.
 */
function refuseDevelopmentDefaults(env: Env, problems: string[]): void {
  if (env.MERCHANT_KEYS === undefined) {
    problems.push(
      'MERCHANT_KEYS is required with NODE_ENV=production (a generated key is a development convenience): set a comma-separated list of keys, each at least 32 random characters without spaces (e.g. openssl rand -base64 32)',
    );
  }
  if (env.PROVIDER === undefined) {
    problems.push(
      'PROVIDER is required with NODE_ENV=production: remote (with AUTH_URL, CLIENT_ID, CLIENT_SECRET, SIGNING_KEY_PEM and the other provider settings), or sandbox to run the embedded sandbox, with its generated client secret and signing key, on purpose',
    );
  }
}

/**
 * What production must not run without: an https public address (session and login cookies are `Secure` only on
 * https, and browsers send others over plain HTTP), and a token on /metrics (which names routes, principals' counts
 * and provider failures). ALLOW_INSECURE_PUBLIC_URL=true is for a deployment that knows its TLS ends in front of a
 * plain-HTTP PUBLIC_URL it cannot change.
 */
function refuseInsecureProduction(config: Config, allowInsecurePublicUrl: boolean, problems: string[]): void {
  if (!allowInsecurePublicUrl && !config.publicUrl?.startsWith('https:')) {
    problems.push(
      `PUBLIC_URL must be an https:// address with NODE_ENV=production (cookies are marked Secure only on https); got ${config.publicUrl === undefined ? 'none (the listening address, http)' : JSON.stringify(config.publicUrl)}. Set ALLOW_INSECURE_PUBLIC_URL=true to run on plain HTTP anyway`,
    );
  }
  if (config.metricsToken === undefined) {
    problems.push(
      'METRICS_TOKEN is required with NODE_ENV=production: GET /metrics then needs "Authorization: Bearer <METRICS_TOKEN>" (at least 16 characters without spaces)',
    );
  }
}

const INSECURE_PROVIDER_HINT = 'Set ALLOW_INSECURE_PROVIDER_URLS=true for a provider reached over plain HTTP on purpose (one on this machine)';

/**
 * Plain-HTTP addresses of the provider and of the keys that authenticate it or the users, refused in production:
 * anyone on the path could read the credentials sent there or serve keys of their own. A value is named by its
 * origin only, so credentials written into a URL are never repeated. PROVIDER=sandbox has no such addresses.
 */
function refuseInsecureProviderUrls(config: Config, allowInsecure: boolean, problems: string[]): void {
  const plain = (url: string): string | undefined => (url.startsWith('https:') ? undefined : new URL(url).origin);
  if (config.provider !== 'sandbox' && !allowInsecure) {
    const { authUrl, verificationUrl, payoutUrl, paymentsUrl, dataUrl, webhookJwksUrls } = config.provider;
    const named = { AUTH_URL: authUrl, VERIFICATION_URL: verificationUrl, PAYOUT_URL: payoutUrl, PAYMENTS_URL: paymentsUrl, DATA_URL: dataUrl };
    for (const [name, url] of Object.entries(named)) {
      const origin = url === '' ? undefined : plain(url);
      if (origin !== undefined)
        problems.push(
          `${name} must be an https:// address with NODE_ENV=production (provider calls carry client credentials, bank tokens and signed payouts); got ${origin}. ${INSECURE_PROVIDER_HINT}`,
        );
    }
    webhookJwksUrls.forEach((url, index) => {
      const origin = isUrl(url, ['http:', 'https:']) ? plain(url) : undefined;
      if (origin !== undefined)
        problems.push(
          `WEBHOOK_JWKS_URLS entry ${index + 1} (counting from 1) must be an https:// address with NODE_ENV=production (its keys decide which webhooks are the provider's); got ${origin}. ${INSECURE_PROVIDER_HINT}`,
        );
    });
  }
  // The identity provider is another party than the payments provider: its keys mint every user, so no flag allows it.
  const jwks = config.appIdentity?.jwksUrl;
  const jwksOrigin = jwks === undefined || jwks === '' ? undefined : plain(jwks);
  if (jwksOrigin !== undefined) {
    problems.push(
      `AUTH_JWKS_URL must be an https:// address with NODE_ENV=production (the keys it serves decide who every user is); got ${jwksOrigin}. ALLOW_INSECURE_PROVIDER_URLS does not cover the identity provider`,
    );
  }
}

const MERCHANT_KEY_MIN_LENGTH = 32;
const MERCHANT_KEY_MIN_DISTINCT = 8;

/**
 * Merchant keys a person could guess or type from memory, refused in production. Eight distinct characters let
 * random hex (16 symbols) through with certainty in practice while refusing one letter or a short word repeated.
 * A key is named by its position in MERCHANT_KEYS, never by its value.
 */
function refuseWeakMerchantKeys(env: Env, keys: string[], problems: string[]): void {
  if (env.MERCHANT_KEYS === undefined) return;
  const advice = `production needs keys of at least ${MERCHANT_KEY_MIN_LENGTH} characters with at least ${MERCHANT_KEY_MIN_DISTINCT} different characters, not one sequence repeated (e.g. openssl rand -base64 32)`;
  keys.forEach((key, index) => {
    const weakness =
      key.length < MERCHANT_KEY_MIN_LENGTH
        ? `is shorter than ${MERCHANT_KEY_MIN_LENGTH} characters`
        : new Set(key).size < MERCHANT_KEY_MIN_DISTINCT
          ? `has fewer than ${MERCHANT_KEY_MIN_DISTINCT} different characters`
          : isRepetition(key)
            ? 'is one short sequence repeated'
            : undefined;
    if (weakness !== undefined) problems.push(`MERCHANT_KEYS key ${index + 1} (counting from 1) ${weakness}: ${advice}`);
  });
}

/** True when the text is a shorter text written out two or more times (`abcabcabc`). */
function isRepetition(text: string): boolean {
  for (let period = 1; period <= text.length / 2; period += 1) {
    if (text.length % period === 0 && text.slice(0, period).repeat(text.length / period) === text) return true;
  }
  return false;
}

/** A rate of 0 turns a limiter off: production keeps both unless ALLOW_NO_RATE_LIMIT=true says another layer limits. */
function refuseRateLimitsOff(rateLimit: RateLimitConfig, problems: string[]): void {
  const off = { RATE_LIMIT_PER_SECOND: rateLimit.perSecond, WEBHOOK_RATE_LIMIT_PER_SECOND: rateLimit.webhookPerSecond };
  for (const [name, perSecond] of Object.entries(off)) {
    if (perSecond === 0)
      problems.push(
        `${name}=0 turns the rate limit off, which NODE_ENV=production refuses: set a rate above 0 (up to 1000000), or ALLOW_NO_RATE_LIMIT=true when a layer in front limits on purpose`,
      );
  }
}

/** The provider settings of the embedded sandbox, once it listens; index.ts and the tests use this. */
export function withProvider(config: Readonly<Config>, provider: ProviderConfig): Readonly<ResolvedConfig> {
  return Object.freeze({ ...config, provider });
}

function readPersistedDocuments(env: Env, read: Reader, problems: string[]): PersistedDocumentsConfig {
  const mode = read.oneOf('PERSISTED_DOCUMENTS', ['off', 'allow', 'only'] as const, 'off');
  const manifestPath = env.PERSISTED_DOCUMENTS_MANIFEST?.trim() || undefined;
  if (mode === 'only' && manifestPath === undefined) {
    problems.push('PERSISTED_DOCUMENTS=only needs PERSISTED_DOCUMENTS_MANIFEST, the JSON file of the documents clients may run (npm run persist writes one)');
  }
  if (mode === 'off' && manifestPath !== undefined) problems.push('PERSISTED_DOCUMENTS_MANIFEST is only used with PERSISTED_DOCUMENTS=allow or only');
  const apqQuota = {
    documents: read.integer('PERSISTED_DOCUMENTS_APQ_MAX_DOCUMENTS', 200, { min: 0, max: 1_000_000 }),
    bytes: read.integer('PERSISTED_DOCUMENTS_APQ_MAX_BYTES', 1024 * 1024, { min: 0, max: 1024 * 1024 * 1024 }),
  };
  return { mode, manifestPath, apqQuota };
}

const OTEL_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

/** The OpenTelemetry specification's variables, with its defaults, except that tracing is off until asked for. */
function readTelemetry(env: Env, read: Reader, problems: string[]): TelemetryConfig {
  const disabled = read.oneOf('OTEL_SDK_DISABLED', ['true', 'false'] as const, 'false') === 'true';
  const exporterName = read.oneOf('OTEL_TRACES_EXPORTER', ['otlp', 'console', 'none'] as const, 'none');
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  // Setting an endpoint is asking for OTLP; OTEL_TRACES_EXPORTER alone asks for it at the default address.
  const wanted = env.OTEL_TRACES_EXPORTER === undefined ? (tracesEndpoint ?? endpoint) !== undefined : exporterName !== 'none';
  const exporter = disabled || !wanted ? undefined : exporterName === 'console' ? 'console' : 'otlp';
  let tracesUrl = 'http://localhost:4318/v1/traces';
  if (tracesEndpoint !== undefined) {
    if (isUrl(tracesEndpoint, ['http:', 'https:'])) tracesUrl = tracesEndpoint;
    else problems.push(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an absolute http(s) URL; got ${JSON.stringify(tracesEndpoint)}`);
  } else if (endpoint !== undefined) {
    if (isUrl(endpoint, ['http:', 'https:'])) tracesUrl = `${endpoint.replace(/\/+$/, '')}/v1/traces`;
    else
      problems.push(
        `OTEL_EXPORTER_OTLP_ENDPOINT must be an absolute http(s) URL (the collector's OTLP/HTTP address, e.g. http://collector:4318); got ${JSON.stringify(endpoint)}`,
      );
  }
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol !== undefined && protocol !== 'http/json' && protocol !== 'http/protobuf') {
    problems.push(
      `OTEL_EXPORTER_OTLP_PROTOCOL must be http/json (the gateway exports OTLP over HTTP with JSON; collectors accept it on the http/protobuf port); got ${JSON.stringify(protocol)}`,
    );
  }
  const sampler = read.oneOf('OTEL_TRACES_SAMPLER', OTEL_SAMPLERS, 'parentbased_always_on');
  const samplerRatio =
    env.OTEL_TRACES_SAMPLER_ARG === undefined || !sampler.endsWith('traceidratio') ? 1 : read.number('OTEL_TRACES_SAMPLER_ARG', 1, { min: 0, max: 1 });
  return {
    exporter,
    tracesUrl,
    headers: { ...keyValueList(env, 'OTEL_EXPORTER_OTLP_HEADERS', problems), ...keyValueList(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', problems) },
    serviceName: env.OTEL_SERVICE_NAME?.trim() || 'bankgraph',
    resourceAttributes: keyValueList(env, 'OTEL_RESOURCE_ATTRIBUTES', problems),
    sampler,
    samplerRatio,
    trustInboundSampling: read.oneOf('OTEL_TRUST_INBOUND_SAMPLING', ['true', 'false'] as const, 'false') === 'true',
  };
}

/** `key1=value1,key2=value2` with percent-encoded values, as the OpenTelemetry specification writes them. */
function keyValueList(env: Env, name: string, problems: string[]): Record<string, string> {
  const value = env[name];
  const result: Record<string, string> = {};
  if (value === undefined || value.trim() === '') return result;
  for (const part of value.split(',')) {
    const at = part.indexOf('=');
    const key = part.slice(0, at).trim();
    if (at <= 0 || key === '') {
      // The value may be a credential: the message names the variable, never what it holds.
      problems.push(`${name} must be a comma-separated list of key=value pairs`);
      return {};
    }
    try {
      result[key] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      problems.push(`${name} has a value that is not valid percent-encoding (key ${JSON.stringify(key)})`);
      return {};
    }
  }
  return result;
}

const DURATION_UNITS_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `12h`, `90s`, `500ms`: a whole number and a unit, in milliseconds; a bare number in `bareUnit` when given. NaN otherwise. */
function durationMs(value: string, bareUnit: keyof typeof DURATION_UNITS_MS | undefined): number {
  const match = /^\s*(\d+)\s*(ms|s|m|h|d)?\s*$/.exec(value);
  const unit = match?.[2] ?? bareUnit;
  return match && unit ? Number(match[1]) * DURATION_UNITS_MS[unit as keyof typeof DURATION_UNITS_MS] : Number.NaN;
}

class Reader {
  constructor(
    private readonly env: Env,
    private readonly problems: string[],
  ) {}

  required(name: string): string {
    const value = this.env[name];
    if (value === undefined || value.trim() === '') {
      this.problems.push(`${name} is required with PROVIDER=remote`);
      return '';
    }
    return value;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.env[name];
    if (value === undefined) return fallback;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    this.problems.push(`${name} must be one of ${allowed.join(', ')}; got ${JSON.stringify(value)}`);
    return fallback;
  }

  integer(name: string, fallback: number, bounds: { min?: number; max?: number } = {}): number {
    const value = this.env[name];
    if (value === undefined) return fallback;
    const parsed = /^-?\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
    const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = bounds;
    if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max}; got ${JSON.stringify(value)}`);
      return fallback;
    }
    return parsed;
  }

  number(name: string, fallback: number, bounds: { minExclusive: number; max: number } | { min: number; max: number }): number {
    const value = this.env[name];
    if (value === undefined) return fallback;
    const parsed = value.trim() === '' ? Number.NaN : Number(value);
    const tooLow = 'min' in bounds ? parsed < bounds.min : parsed <= bounds.minExclusive;
    if (!Number.isFinite(parsed) || tooLow || parsed > bounds.max) {
      const lower = 'min' in bounds ? `from ${bounds.min}` : `greater than ${bounds.minExclusive} and`;
      this.problems.push(`${name} must be a number ${lower} ${'min' in bounds ? 'to' : 'at most'} ${bounds.max}; got ${JSON.stringify(value)}`);
      return fallback;
    }
    return parsed;
  }

  /** A duration with its unit: `500ms`, `90s`, `30m`, `12h` or `7d`. */
  duration(name: string, fallbackMs: number, bounds: { minMs: number; maxMs: number }): number {
    const value = this.env[name];
    if (value === undefined) return fallbackMs;
    const parsed = durationMs(value, undefined);
    if (!Number.isSafeInteger(parsed) || parsed < bounds.minMs || parsed > bounds.maxMs) {
      this.problems.push(
        `${name} must be a whole number with a unit (ms, s, m, h or d), e.g. 12h, from ${bounds.minMs} ms to ${bounds.maxMs / 86_400_000} days; got ${JSON.stringify(value)}`,
      );
      return fallbackMs;
    }
    return parsed;
  }

  /** Unset means "not used"; set, it is a credential, so a guessable one is refused. */
  optionalSecret(name: string): string | undefined {
    const value = this.env[name];
    if (value === undefined) return undefined;
    if (value.length < 16 || /\s/.test(value)) {
      this.problems.push(`${name} must be at least 16 characters without spaces`);
      return undefined;
    }
    return value;
  }

  port(name: string, fallback: number): number {
    return this.integer(name, fallback, { min: 0, max: 65_535 });
  }

  url(name: string): string {
    const value = this.required(name);
    if (value === '') return value;
    if (!isUrl(value, ['http:', 'https:'])) {
      this.problems.push(`${name} must be an absolute http(s) URL; got ${JSON.stringify(value)}`);
      return '';
    }
    return value.replace(/\/+$/, '');
  }

  urlList(name: string): string[] {
    const value = this.required(name);
    const urls = value
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean);
    const bad = urls.filter((url) => !isUrl(url, ['http:', 'https:']));
    if (value !== '' && (urls.length === 0 || bad.length > 0)) {
      this.problems.push(`${name} must be a comma-separated list of absolute http(s) URLs; got ${JSON.stringify(value)}`);
    }
    return urls;
  }

  /**
   * Unset or empty means none. Each entry must be an origin (scheme, host, port) exactly as browsers send it, since
   * an Origin header is compared with it as a string.
   */
  originList(name: string, hint = 'origins like https://app.example.com (no path)'): string[] {
    const value = this.env[name];
    if (value === undefined) return [];
    const origins = value
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean);
    // A `*` is a valid host character to the URL parser, but no browser sends it: here it could only mean a wildcard.
    const bad = origins.filter((origin) => !isUrl(origin, ['http:', 'https:']) || origin.includes('*') || new URL(origin).origin !== origin.replace(/\/$/, ''));
    if (bad.length > 0) {
      this.problems.push(`${name} must be a comma-separated list of ${hint}; got ${JSON.stringify(bad[0])}`);
      return [];
    }
    return origins.map((origin) => new URL(origin).origin);
  }

  privateKeyPem(name: string): string {
    // Environment files often hold a PEM on one line with literal \n.
    const value = this.required(name).replace(/\\n/g, '\n');
    if (value === '') return value;
    try {
      const key = createPrivateKey(value);
      if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'secp521r1') {
        this.problems.push(`${name} must be an EC P-521 private key (ES512 request signing)`);
      }
    } catch {
      this.problems.push(`${name} must be a PEM-encoded private key ("-----BEGIN PRIVATE KEY-----...")`);
    }
    return value;
  }

  storeUrl(name: string, fallback: string): string {
    const value = this.env[name] ?? fallback;
    // sqlite://<path> is a file path (relative to the working directory, or absolute with sqlite:///), not a host.
    const sqlite = /^sqlite:\/\/.+/.test(value);
    if (!sqlite && !isUrl(value, ['postgres:', 'postgresql:'])) {
      // Money and identity need constraints and transactions; Redis still serves CACHE_URL and PUBSUB_URL.
      this.problems.push(`${name} must be sqlite://<file> (or sqlite://:memory:) or a postgres:// URL; got ${JSON.stringify(value)}`);
    }
    return value;
  }

  encryptionKey(name: string, required: boolean): Buffer | undefined {
    const value = this.env[name];
    if (value === undefined || value === '') {
      if (required) this.problems.push(`${name} is required in production: 32 random bytes, base64 or hex (e.g. openssl rand -base64 32)`);
      return undefined;
    }
    const key = /^[0-9a-f]{64}$/i.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
    if (key.length !== 32) this.problems.push(`${name} must be 32 bytes, base64 (44 characters) or hex (64 characters)`);
    return key;
  }

  /**
   * IDENTITY: `app` needs all three of AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE; `bank` none of them. Unset, it is
   * `app` when any of them is given or in production (bank identity guesses who someone is from what their bank
   * shows, so production runs it only when asked for: docs/identity.md), else `bank`.
   */
  appIdentity(nodeEnv: NodeEnv): AppIdentityConfig | undefined {
    const names = ['AUTH_JWKS_URL', 'AUTH_ISSUER', 'AUTH_AUDIENCE'] as const;
    const given = names.filter((name) => this.env[name] !== undefined && this.env[name] !== '');
    const identity = this.oneOf('IDENTITY', ['app', 'bank'] as const, given.length > 0 || nodeEnv === 'production' ? 'app' : 'bank');
    if (identity === 'bank') {
      if (given.length > 0)
        this.problems.push(
          `${given.join(', ')} ${given.length === 1 ? 'is' : 'are'} only used with IDENTITY=app; IDENTITY=bank signs users in through their bank`,
        );
      if (this.env.AUTH_ALGORITHMS !== undefined) this.problems.push('AUTH_ALGORITHMS is only used with AUTH_JWKS_URL, AUTH_ISSUER and AUTH_AUDIENCE');
      if (this.env.AUTH_MAX_TOKEN_AGE !== undefined) this.problems.push('AUTH_MAX_TOKEN_AGE is only used with AUTH_JWKS_URL, AUTH_ISSUER and AUTH_AUDIENCE');
      return undefined;
    }
    if (given.length < names.length) {
      const missing = names.filter((name) => !given.includes(name)).join(', ');
      this.problems.push(
        given.length === 0 && this.env.IDENTITY === undefined
          ? `app identity is the default with NODE_ENV=production: set ${missing} (your app's OIDC provider), or IDENTITY=bank to sign users in through their bank on purpose`
          : `app identity needs all of ${names.join(', ')}; missing ${missing}`,
      );
      return undefined;
    }
    const algorithms = (this.env.AUTH_ALGORITHMS ?? 'RS256,ES256')
      .split(',')
      .map((alg) => alg.trim())
      .filter(Boolean);
    const unknown = algorithms.filter((alg) => !(JWT_ALGORITHMS as readonly string[]).includes(alg));
    if (algorithms.length === 0 || unknown.length > 0) {
      this.problems.push(`AUTH_ALGORITHMS must be a comma-separated list of ${JWT_ALGORITHMS.join(', ')}; got ${JSON.stringify(this.env.AUTH_ALGORITHMS)}`);
    }
    return {
      jwksUrl: this.url('AUTH_JWKS_URL'),
      issuer: this.env.AUTH_ISSUER!,
      audience: this.env.AUTH_AUDIENCE!,
      algorithms,
      maxTokenAgeSeconds: this.durationSeconds('AUTH_MAX_TOKEN_AGE', 24 * 60 * 60, { min: 60, max: 30 * 24 * 60 * 60 }),
    };
  }

  /** A duration: whole seconds, or a number with s, m, h or d (`90s`, `30m`, `24h`, `7d`). */
  durationSeconds(name: string, fallback: number, bounds: { min: number; max: number }): number {
    const value = this.env[name];
    if (value === undefined) return fallback;
    const ms = value.trim().endsWith('ms') ? Number.NaN : durationMs(value, 's');
    const seconds = ms / 1_000;
    if (!Number.isSafeInteger(seconds) || seconds < bounds.min || seconds > bounds.max) {
      this.problems.push(
        `${name} must be a duration from ${bounds.min} s to ${bounds.max / 86_400} d: whole seconds or a number with s, m, h or d (e.g. 24h); got ${JSON.stringify(value)}`,
      );
      return fallback;
    }
    return seconds;
  }

  memoryOrRedis(name: string): string {
    const value = this.env[name] ?? 'memory';
    if (value !== 'memory' && !isUrl(value, ['redis:', 'rediss:'])) {
      this.problems.push(`${name} must be "memory" or a redis:// URL; got ${JSON.stringify(value)}`);
    }
    return value;
  }

  /** Characters that mean nothing to Redis's key patterns (SCAN MATCH, PSUBSCRIBE), so a prefix matches only itself. */
  redisKeyPrefix(name: string, fallback: string): string {
    const value = this.env[name];
    if (value === undefined) return fallback;
    if (!/^[A-Za-z0-9:._{}/-]{1,64}$/.test(value)) {
      this.problems.push(
        `${name} must be 1 to 64 letters, digits or any of : . _ - / { } (e.g. bankgraph-eu: or shop-a:bankgraph:); got ${JSON.stringify(value)}`,
      );
      return fallback;
    }
    return value;
  }

  merchantKeys(name: string): string[] {
    const keys = (this.env[name] ?? '')
      .split(',')
      .map((key) => key.trim())
      .filter(Boolean);
    if (keys.length === 0 || keys.some((key) => key.length < 16 || /\s/.test(key))) {
      this.problems.push(`${name} must be a comma-separated list of keys, each at least 16 characters without spaces`);
    }
    return keys;
  }
}

function isUrl(value: string, protocols: string[]): boolean {
  try {
    return protocols.includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** Where the provider is: its addresses and credentials with PROVIDER=remote; the sandbox's own otherwise. */
function readProvider(env: Env, read: Reader, problems: string[], providerKind: 'sandbox' | 'remote', sandbox: SandboxConfig): ProviderConfig | 'sandbox' {
  let provider: ProviderConfig | 'sandbox' = 'sandbox';
  if (providerKind === 'remote') {
    provider = {
      authUrl: read.url('AUTH_URL'),
      verificationUrl: read.url('VERIFICATION_URL'),
      payoutUrl: read.url('PAYOUT_URL'),
      paymentsUrl: read.url('PAYMENTS_URL'),
      dataUrl: read.url('DATA_URL'),
      clientId: read.required('CLIENT_ID'),
      clientSecret: read.required('CLIENT_SECRET'),
      signingKey: { keyId: read.required('SIGNING_KEY_ID'), privateKeyPem: read.privateKeyPem('SIGNING_KEY_PEM') },
      webhookJwksUrls: read.urlList('WEBHOOK_JWKS_URLS'),
    };
  } else {
    for (const name of [
      'AUTH_URL',
      'VERIFICATION_URL',
      'PAYOUT_URL',
      'PAYMENTS_URL',
      'DATA_URL',
      'CLIENT_ID',
      'CLIENT_SECRET',
      'SIGNING_KEY_PEM',
      'WEBHOOK_JWKS_URLS',
    ]) {
      if (env[name] !== undefined) problems.push(`${name} is only used with PROVIDER=remote; with PROVIDER=sandbox the sandbox provides it`);
    }
  }
  if (providerKind === 'remote' && sandbox.url !== undefined) {
    problems.push('SANDBOX_URL is only used with PROVIDER=sandbox (the gateway then reads every provider setting from that sandbox)');
  }
  if (sandbox.url !== undefined) {
    for (const name of ['SANDBOX_PORT', 'SANDBOX_LATENCY_MS', 'SANDBOX_TIME_SCALE']) {
      if (env[name] !== undefined)
        problems.push(`${name} sets up the embedded sandbox; with SANDBOX_URL, set it where that sandbox runs (npm run sandbox reads it)`);
    }
  }

  return provider;
}

/** The provider client's timeouts, retries, connection pool and breakers. */
function readHttp(read: Reader): Config['http'] {
  return {
    connectTimeoutMs: read.integer('HTTP_CONNECT_TIMEOUT_MS', 5_000, { min: 1 }),
    headersTimeoutMs: read.integer('HTTP_HEADERS_TIMEOUT_MS', 15_000, { min: 1 }),
    bodyTimeoutMs: read.integer('HTTP_BODY_TIMEOUT_MS', 15_000, { min: 1 }),
    maxAttempts: read.integer('HTTP_MAX_ATTEMPTS', 3, { min: 1, max: 10 }),
    backoffBaseMs: read.integer('HTTP_BACKOFF_BASE_MS', 100, { min: 0 }),
    backoffCapMs: read.integer('HTTP_BACKOFF_CAP_MS', 2_000, { min: 0 }),
    maxRetryAfterMs: read.integer('HTTP_MAX_RETRY_AFTER_MS', 5_000, { min: 0 }),
    connectionsPerOrigin: read.integer('HTTP_CONNECTIONS_PER_ORIGIN', 128, { min: 1 }),
    maxBodyBytes: read.integer('PROVIDER_MAX_BODY_BYTES', 16 * 1024 * 1024, { min: 1_024, max: 1024 * 1024 * 1024 }),
    breakerFailures: read.integer('PROVIDER_BREAKER_FAILURES', 5, { min: 1, max: 1_000 }),
    breakerCooldownMs: read.integer('PROVIDER_BREAKER_COOLDOWN_MS', 10_000, { min: 1, max: 600_000 }),
    breakerRouteConnections: read.integer('PROVIDER_BREAKER_ROUTE_CONNECTIONS', 3, { min: 1, max: 1_000 }),
  };
}
