import { randomBytes } from 'node:crypto';
import { formatDuration } from './duration';
import { RENAMED_DURATIONS, type Variables } from './schema';

/** The validated variables grouped as the gateway uses them: server, provider, identity, store, money, limits, live, observability. */

/** The new spelling of a duration, else its older `*_MS` one, else the default. */
function pick(vars: Variables, name: keyof typeof RENAMED_DURATIONS, fallbackMs: number): number {
  const byName = vars as unknown as Record<string, number | undefined>;
  return byName[name] ?? byName[RENAMED_DURATIONS[name]] ?? fallbackMs;
}

type Sandboxed = Extract<Variables, { PROVIDER: 'sandbox' }>;
type Remote = Extract<Variables, { PROVIDER: 'remote' }>;

function sandboxOf(vars: Sandboxed) {
  return {
    kind: 'sandbox' as const,
    /** SANDBOX_URL: a standalone sandbox (`npm run sandbox`) to use instead of starting one in this process. */
    url: vars.SANDBOX_URL,
    /** 0 (the default): a free port, printed at start. */
    port: vars.SANDBOX_PORT,
    latencyMs: pick(vars, 'SANDBOX_LATENCY', 0),
    timeScale: vars.SANDBOX_TIME_SCALE,
  };
}

function remoteOf(vars: Remote) {
  return {
    kind: 'remote' as const,
    authUrl: vars.AUTH_URL,
    verificationUrl: vars.VERIFICATION_URL,
    payoutUrl: vars.PAYOUT_URL,
    /** The spec's {base_url}: the payments API, where refunds live. */
    paymentsUrl: vars.PAYMENTS_URL,
    dataUrl: vars.DATA_URL,
    clientId: vars.CLIENT_ID,
    clientSecret: vars.CLIENT_SECRET,
    signingKey: { keyId: vars.SIGNING_KEY_ID, privateKeyPem: vars.SIGNING_KEY_PEM },
    /** Webhook signatures are trusted only with keys from these JWKS addresses. */
    webhookJwksUrls: vars.WEBHOOK_JWKS_URLS,
  };
}

/** PROVIDER, resolved once: the embedded or standalone sandbox's settings, or the remote provider's. */
function providerOf(vars: Variables): ReturnType<typeof sandboxOf> | ReturnType<typeof remoteOf> {
  return vars.PROVIDER === 'sandbox' ? sandboxOf(vars) : remoteOf(vars);
}

/** App identity (AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE) when IDENTITY resolves to `app`; crossFieldProblems has checked it is whole. */
function appIdentityOf(vars: Variables) {
  if (vars.AUTH_JWKS_URL === undefined || vars.AUTH_ISSUER === undefined || vars.AUTH_AUDIENCE === undefined || vars.IDENTITY === 'bank') return undefined;
  return {
    jwksUrl: vars.AUTH_JWKS_URL,
    issuer: vars.AUTH_ISSUER,
    audience: vars.AUTH_AUDIENCE,
    /** Accepted JWS algorithms; never `none`. */
    algorithms: vars.AUTH_ALGORITHMS ?? ['RS256', 'ES256'],
    /** A token issued (`iat`) longer ago than this is refused, whatever its `exp` says. */
    maxTokenAgeSeconds: vars.AUTH_MAX_TOKEN_AGE ?? 24 * 60 * 60,
  };
}

/** Tracing is off until an endpoint or an exporter is asked for; OTEL_SDK_DISABLED=true keeps it off. */
function telemetryOf(vars: Variables) {
  const endpoint = vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? vars.OTEL_EXPORTER_OTLP_ENDPOINT;
  const wanted = vars.OTEL_TRACES_EXPORTER === undefined ? endpoint !== undefined : vars.OTEL_TRACES_EXPORTER !== 'none';
  const exporter: 'otlp' | 'console' | undefined = vars.OTEL_SDK_DISABLED || !wanted ? undefined : vars.OTEL_TRACES_EXPORTER === 'console' ? 'console' : 'otlp';
  const sampler = vars.OTEL_TRACES_SAMPLER;
  return {
    exporter,
    /** Full OTLP/HTTP traces URL (…/v1/traces). */
    tracesUrl:
      vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
      (vars.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
        ? 'http://localhost:4318/v1/traces'
        : `${vars.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`),
    /** Sent with every export (a collector's API key): a secret, never logged. */
    headers: { ...vars.OTEL_EXPORTER_OTLP_HEADERS, ...vars.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
    serviceName: vars.OTEL_SERVICE_NAME ?? 'bankgraph',
    resourceAttributes: vars.OTEL_RESOURCE_ATTRIBUTES,
    sampler,
    /** The ratio for the traceidratio samplers. */
    samplerRatio: sampler.endsWith('traceidratio') ? vars.OTEL_TRACES_SAMPLER_ARG : 1,
    /** An inbound `traceparent`'s sampled flag decides (else the root sampler does). */
    trustInboundSampling: vars.OTEL_TRUST_INBOUND_SAMPLING,
  };
}

function webhooksOf(vars: Variables) {
  return {
    maxBodyBytes: vars.WEBHOOK_MAX_BODY_BYTES,
    /** How far a webhook's signed timestamp may be from now. */
    maxSkewMs: vars.WEBHOOK_MAX_SKEW,
    /** An unknown key id refetches its JWKS at most this often. */
    jwksMinRefetchIntervalMs: vars.WEBHOOK_JWKS_MIN_REFETCH,
  };
}

function watchesOf(vars: Variables) {
  return {
    status: {
      initialDelayMs: vars.STATUS_WATCH_INITIAL_DELAY,
      maxDelayMs: vars.STATUS_WATCH_MAX_DELAY,
      factor: vars.STATUS_WATCH_BACKOFF_FACTOR,
      /** The watcher lease's lifetime, renewed on every read; crossFieldProblems has checked it exceeds maxDelayMs. */
      leaseTtlMs: vars.STATUS_WATCH_LEASE_TTL,
    },
    /** How long one read of a payment's refunds serves every refundUpdated subscription that opens meanwhile. */
    refundStateReuseMs: vars.REFUND_STATE_REUSE,
  };
}

/** The validated variables, grouped as the gateway uses them. */
export function toConfig(vars: Variables, merchantKeys: string[] | undefined) {
  const nodeEnv = vars.NODE_ENV;
  const production = nodeEnv === 'production';
  return {
    server: {
      nodeEnv,
      port: vars.PORT,
      // Reachable from other machines only where that is the point (production, a container) or asked for.
      host: vars.HOST ?? (production ? '0.0.0.0' : '127.0.0.1'),
      /** How the provider and browsers reach this gateway; undefined means "the address it ends up listening on". */
      publicUrl: vars.PUBLIC_URL ?? (vars.PORT === 0 ? undefined : `http://localhost:${vars.PORT}`),
      /** CORS_ORIGINS and its older name ALLOWED_ORIGINS together: the browser origins besides the gateway's own admitted with credentials. */
      corsOrigins: [...new Set([...vars.CORS_ORIGINS, ...vars.ALLOWED_ORIGINS])],
      /** ALLOWED_ORIGINS as given (merged into corsOrigins); the gateway says at start that it is now CORS_ORIGINS. */
      allowedOrigins: vars.ALLOWED_ORIGINS,
      /** FAST_PATHS=off sends every subscriber's results and reads every list the ordinary way (src/platform/live/fan-out.ts). */
      fastPaths: vars.FAST_PATHS === 'on',
    },
    provider: providerOf(vars),
    identity: {
      /** undefined: bank identity (users sign in through their bank). */
      app: appIdentityOf(vars),
      merchantKeys: merchantKeys ?? [randomBytes(24).toString('base64url')],
      /** True when MERCHANT_KEYS was not set and a key was made up at start (so index.ts prints it). */
      merchantKeysGenerated: merchantKeys === undefined,
      /** undefined outside production means a generated key kept beside the store. */
      tokenEncryptionKey: vars.TOKEN_ENCRYPTION_KEY,
    },
    store: {
      url: vars.STORE_URL,
      cacheUrl: vars.CACHE_URL,
      pubsubUrl: vars.PUBSUB_URL,
      /** Begins every key and channel the gateway writes to Redis, so deployments sharing one Redis never meet. */
      redisKeyPrefix: vars.REDIS_KEY_PREFIX,
    },
    /** The payout policy and the reconciler's windows (docs/money.md); amounts in minor units, per currency. */
    money: {
      payoutMaxMinor: vars.PAYOUT_MAX_MINOR,
      payoutDailyMaxMinor: vars.PAYOUT_DAILY_MAX_MINOR,
      payoutBeneficiaryDailyMaxMinor: vars.PAYOUT_BENEFICIARY_DAILY_MAX_MINOR,
      payoutApprovalAboveMinor: vars.PAYOUT_APPROVAL_ABOVE_MINOR,
      payoutApprovalExpiryMs: pick(vars, 'PAYOUT_APPROVAL_EXPIRY', 72 * 3_600_000),
      payoutSubmissionExpiryMs: pick(vars, 'PAYOUT_SUBMISSION_EXPIRY', 24 * 3_600_000),
      dataTaskWebhookGraceMs: pick(vars, 'DATA_TASK_WEBHOOK_GRACE', 30_000),
      reconcileIntervalMs: pick(vars, 'RECONCILE_INTERVAL', 10_000),
    },
    limits: {
      /** Per operation, the same for HTTP and WebSocket (docs/operations.md, "Operation limits"). */
      operation: {
        maxDepth: vars.GRAPHQL_MAX_DEPTH,
        maxAliases: vars.GRAPHQL_MAX_ALIASES,
        maxDirectives: vars.GRAPHQL_MAX_DIRECTIVES,
        maxTokens: vars.GRAPHQL_MAX_TOKENS,
        maxCost: vars.GRAPHQL_MAX_COST,
        /** Largest GraphQL request body over HTTP, and largest WebSocket message. */
        maxBodyBytes: vars.GRAPHQL_MAX_BODY_BYTES,
      },
      /** Every query and mutation's deadline: provider calls and their retries spend only what is left of it. */
      operationTimeoutMs: pick(vars, 'OPERATION_TIMEOUT', 10_000),
      /** How long a shutdown waits for in-flight requests before closing their connections. */
      shutdownTimeoutMs: pick(vars, 'SHUTDOWN_TIMEOUT', 10_000),
      /** A token bucket per principal, and per source address for webhooks; a rate of 0 turns it off (outside production). */
      rateLimit: {
        perSecond: vars.RATE_LIMIT_PER_SECOND,
        burst: vars.RATE_LIMIT_BURST,
        webhookPerSecond: vars.WEBHOOK_RATE_LIMIT_PER_SECOND,
        webhookBurst: vars.WEBHOOK_RATE_LIMIT_BURST,
        /** How long a decision waits for the shared buckets (Redis) before this instance decides alone. */
        storeTimeoutMs: pick(vars, 'RATE_LIMIT_STORE_TIMEOUT', 250),
      },
      /** The provider client's timeouts, retries, connection pool and breakers. */
      providerCalls: {
        connectTimeoutMs: pick(vars, 'HTTP_CONNECT_TIMEOUT', 5_000),
        headersTimeoutMs: pick(vars, 'HTTP_HEADERS_TIMEOUT', 15_000),
        bodyTimeoutMs: pick(vars, 'HTTP_BODY_TIMEOUT', 15_000),
        /** Attempts in all, the first included. */
        maxAttempts: vars.HTTP_MAX_ATTEMPTS,
        backoffBaseMs: pick(vars, 'HTTP_BACKOFF_BASE', 100),
        backoffCapMs: pick(vars, 'HTTP_BACKOFF_CAP', 2_000),
        /** Longest Retry-After waited out before giving up with UPSTREAM_RATE_LIMITED. */
        retryAfterCapMs: pick(vars, 'HTTP_MAX_RETRY_AFTER', 5_000),
        connectionsPerOrigin: vars.HTTP_CONNECTIONS_PER_ORIGIN,
        /** Largest provider answer read; a larger one is UPSTREAM_ERROR. */
        maxBodyBytes: vars.PROVIDER_MAX_BODY_BYTES,
        breaker: {
          /** Consecutive failed sends on one route (of one bank connection) that open its breaker, and how long it stays open. */
          failures: vars.PROVIDER_BREAKER_FAILURES,
          cooldownMs: pick(vars, 'PROVIDER_BREAKER_COOLDOWN', 10_000),
          /** Distinct connections whose circuits open on a route, with no success between, that open it for everyone. */
          spreadConnections: vars.PROVIDER_BREAKER_ROUTE_CONNECTIONS,
        },
      },
      /** What the gateway keeps of a user's data tasks (docs/operations.md, "Data tasks"). */
      dataTasks: { maxPerUser: vars.DATA_TASKS_MAX_PER_USER, resultsMaxBytes: vars.DATA_TASK_RESULTS_MAX_BYTES },
    },
    /** Sessions and WebSockets: how long they live, how often a socket's owner is checked again, the caps on live work. */
    live: {
      sessionIdleTimeoutMs: vars.SESSION_IDLE_TIMEOUT ?? 12 * 3_600_000,
      principalRecheckMs: pick(vars, 'WS_PRINCIPAL_RECHECK', 60_000),
      maxSubscriptionsPerSocket: vars.WS_MAX_SUBSCRIPTIONS_PER_SOCKET,
      /** Per principal (a user, a merchant key, an anonymous address) on one instance. */
      maxSubscriptionsPerPrincipal: vars.MAX_SUBSCRIPTIONS_PER_PRINCIPAL,
      maxSocketsPerPrincipal: vars.WS_MAX_SOCKETS_PER_PRINCIPAL,
      /** How often an idle SSE or multipart subscription stream gets a heartbeat, so proxies keep it open. */
      streamHeartbeatMs: pick(vars, 'STREAM_HEARTBEAT', 12_000),
    },
    /** Webhook receipt (src/webhooks/). */
    webhooks: webhooksOf(vars),
    /** The payout and refund watches: reads back off from the initial delay to the maximum while nothing changes. */
    watches: watchesOf(vars),
    observability: {
      logLevel: vars.LOG_LEVEL ?? (nodeEnv === 'test' ? 'silent' : 'info'),
      /** When set, GET /metrics needs `Authorization: Bearer <this>`; production requires it. */
      metricsToken: vars.METRICS_TOKEN,
      telemetry: telemetryOf(vars),
    },
    /** Trusted documents and APQ (docs/api.md, "Persisted documents"). */
    persistedDocuments: {
      mode: vars.PERSISTED_DOCUMENTS,
      /** JSON of id -> document (GraphQL Code Generator client preset, Relay, or Apollo's manifest format). */
      manifestPath: vars.PERSISTED_DOCUMENTS_MANIFEST,
      /** What one principal may register by APQ over 24 h (mode allow). */
      apqQuota: { documents: vars.PERSISTED_DOCUMENTS_APQ_MAX_DOCUMENTS, bytes: vars.PERSISTED_DOCUMENTS_APQ_MAX_BYTES },
    },
    /** The MCP endpoint at /mcp (docs/agents.md). */
    mcp: {
      /** off offers read tools only; propose adds propose_payout, whose payouts always await approval. */
      mutations: vars.MCP_MUTATIONS,
      /** A tool that runs any document the agent sends; refused in production. */
      allowArbitraryOperations: vars.MCP_ALLOW_ARBITRARY_OPERATIONS,
      /** The `aud` an app access token must name on /mcp, instead of AUTH_AUDIENCE. */
      audience: vars.MCP_AUDIENCE,
    },
    /** Said at start: older spellings still accepted, each with its new one. */
    notes: renamedNotes(vars),
  };
}

function renamedNotes(vars: Variables): string[] {
  const byName = vars as unknown as Record<string, number | undefined>;
  const notes = Object.entries(RENAMED_DURATIONS)
    .filter(([, old]) => byName[old] !== undefined)
    .map(([name, old]) => `${old} is now ${name} (${formatDuration(byName[old]!)}); rename the setting`);
  if (vars.ALLOWED_ORIGINS.length > 0)
    notes.push('ALLOWED_ORIGINS is now CORS_ORIGINS: its origins are admitted as CORS_ORIGINS are, on HTTP too; rename the setting');
  return notes;
}

export type Config = ReturnType<typeof toConfig>;
export type ProviderSetting = Config['provider'];
export type SandboxConfig = Extract<ProviderSetting, { kind: 'sandbox' }>;
/** Where the provider is and how to call it: PROVIDER=remote's settings, or the sandbox's once it runs. */
export type ProviderConfig = Omit<Extract<ProviderSetting, { kind: 'remote' }>, 'kind'>;
export type AppIdentityConfig = NonNullable<Config['identity']['app']>;
export type MoneyConfig = Config['money'];
export type OperationLimitsConfig = Config['limits']['operation'];
export type TelemetryConfig = Config['observability']['telemetry'];
/** The configuration with the provider's addresses known: `kind` says which provider PROVIDER chose. */
export type ResolvedConfig = Omit<Config, 'provider'> & { provider: ProviderConfig & { kind: ProviderSetting['kind'] } };
