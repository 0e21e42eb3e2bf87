import { generateKeyPairSync } from 'node:crypto';
import { ConfigError, loadConfig, withProvider } from '../../src/platform/config/config';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected the configuration to be refused');
}

describe('loadConfig', () => {
  it('works with no configuration at all: the embedded sandbox, SQLite, memory cache and pubsub, a generated merchant key', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      server: { port: 4000, host: '127.0.0.1', publicUrl: 'http://localhost:4000' },
      provider: { kind: 'sandbox', url: undefined, port: 0, latencyMs: 0, timeScale: 1 },
      store: { url: 'sqlite://./data/gateway.sqlite', cacheUrl: 'memory', pubsubUrl: 'memory' },
      identity: { merchantKeysGenerated: true },
    });
    expect(config.identity.merchantKeys).toHaveLength(1);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('listens on loopback outside production unless HOST says otherwise, and on every interface in production', () => {
    expect(loadConfig({ HOST: '0.0.0.0' }).server.host).toBe('0.0.0.0');
    expect(loadConfig({ NODE_ENV: 'test' }).server.host).toBe('127.0.0.1');
    const production = {
      NODE_ENV: 'production',
      PROVIDER: 'sandbox',
      IDENTITY: 'bank',
      MERCHANT_KEYS: 'a-merchant-key-of-length-0123456789',
      TOKEN_ENCRYPTION_KEY: 'A'.repeat(43) + '=',
      PUBLIC_URL: 'https://gateway.example',
      METRICS_TOKEN: 'metrics-token-0123456789',
    };
    expect(loadConfig(production).server.host).toBe('0.0.0.0');
  });

  it('takes SANDBOX_URL for a standalone sandbox, and refuses settings that sandbox would not see', () => {
    expect(loadConfig({ SANDBOX_URL: 'http://127.0.0.1:4010/' }).provider).toMatchObject({ kind: 'sandbox', url: 'http://127.0.0.1:4010' });
    expect(problemsOf({ SANDBOX_URL: 'localhost:4010' })).toEqual(['SANDBOX_URL must be an absolute http(s) URL; got "localhost:4010"']);
    expect(problemsOf({ SANDBOX_URL: 'http://127.0.0.1:4010', SANDBOX_PORT: '4011' })).toEqual([
      'SANDBOX_PORT sets up the embedded sandbox; with SANDBOX_URL, set it where that sandbox runs (npm run sandbox reads it)',
    ]);
    expect(problemsOf({ SANDBOX_URL: 'http://127.0.0.1:4010', PROVIDER: 'remote' })).toContain(
      'SANDBOX_URL is only used with PROVIDER=sandbox (the gateway then reads every provider setting from that sandbox)',
    );
  });

  it('names every bad variable and says what it accepts', () => {
    const problems = problemsOf({ PORT: 'eighty', SANDBOX_TIME_SCALE: '0', STORE_URL: 'mysql://db', CACHE_URL: 'memcached://x', MERCHANT_KEYS: 'short' });
    expect(problems).toEqual([
      'PORT must be an integer from 0 to 65535; got "eighty"',
      'SANDBOX_TIME_SCALE must be a number greater than 0 and at most 1000000; got "0"',
      'MERCHANT_KEYS must be a comma-separated list of keys, each at least 16 characters without spaces',
      'STORE_URL must be sqlite://<file> (or sqlite://:memory:) or a postgres:// URL; got "mysql://db"',
      'CACHE_URL must be "memory" or a redis:// URL; got "memcached://x"',
    ]);
  });

  it('needs every provider setting with PROVIDER=remote, and checks the signing key is P-521', () => {
    const problems = problemsOf({ PROVIDER: 'remote', AUTH_URL: 'not a url', SIGNING_KEY_PEM: 'garbage' });
    expect(problems).toEqual(
      expect.arrayContaining([
        'AUTH_URL must be an absolute http(s) URL; got "not a url"',
        'VERIFICATION_URL is required with PROVIDER=remote',
        'CLIENT_SECRET is required with PROVIDER=remote',
        'SIGNING_KEY_PEM must be a PEM-encoded private key ("-----BEGIN PRIVATE KEY-----...")',
        'WEBHOOK_JWKS_URLS is required with PROVIDER=remote',
      ]),
    );
    const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(problemsOf({ PROVIDER: 'remote', SIGNING_KEY_PEM: p256 })).toContain('SIGNING_KEY_PEM must be an EC P-521 private key (ES512 request signing)');
  });

  it('accepts a complete remote configuration, with a one-line PEM as env files hold it', () => {
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const config = loadConfig({
      PROVIDER: 'remote',
      AUTH_URL: 'https://auth.example.test/',
      VERIFICATION_URL: 'https://verify.example.test',
      PAYOUT_URL: 'https://payouts.example.test',
      PAYMENTS_URL: 'https://payments.example.test',
      DATA_URL: 'https://data.example.test',
      CLIENT_ID: 'client',
      CLIENT_SECRET: 'secret',
      SIGNING_KEY_ID: 'kid-1',
      SIGNING_KEY_PEM: pem.replace(/\n/g, '\\n'),
      WEBHOOK_JWKS_URLS: 'https://keys.example.test/jwks, https://keys2.example.test/jwks',
      MERCHANT_KEYS: 'merchant-key-aaaaaaaaaaaa,merchant-key-bbbbbbbbbbbb',
    });
    expect(config.provider).toMatchObject({
      authUrl: 'https://auth.example.test',
      webhookJwksUrls: ['https://keys.example.test/jwks', 'https://keys2.example.test/jwks'],
    });
    expect(config.identity.merchantKeys).toEqual(['merchant-key-aaaaaaaaaaaa', 'merchant-key-bbbbbbbbbbbb']);
    expect(config.identity.merchantKeysGenerated).toBe(false);
  });

  it('refuses to start in production on development defaults, naming every variable to set', () => {
    expect(problemsOf({ NODE_ENV: 'production' }).sort()).toEqual([
      expect.stringMatching(/^MERCHANT_KEYS is required with NODE_ENV=production/),
      expect.stringMatching(/^METRICS_TOKEN is required with NODE_ENV=production/),
      expect.stringMatching(/^PROVIDER is required with NODE_ENV=production/),
      expect.stringMatching(/^PUBLIC_URL must be an https:\/\/ address with NODE_ENV=production/),
      expect.stringMatching(/^TOKEN_ENCRYPTION_KEY is required in production/),
      expect.stringMatching(/^app identity is the default with NODE_ENV=production/),
    ]);
    const key = 'ab'.repeat(32);
    const secure = { PUBLIC_URL: 'https://gateway.example', METRICS_TOKEN: 'metrics-token-0123456789' };
    expect(problemsOf({ NODE_ENV: 'production', PROVIDER: 'sandbox', IDENTITY: 'bank', TOKEN_ENCRYPTION_KEY: key, ...secure })).toEqual([
      expect.stringMatching(/^MERCHANT_KEYS is required/),
    ]);
    const chosen = loadConfig({
      NODE_ENV: 'production',
      PROVIDER: 'sandbox',
      IDENTITY: 'bank',
      MERCHANT_KEYS: 'merchant-key-aaaaaaaaaaaa-0123456789',
      TOKEN_ENCRYPTION_KEY: key,
      ...secure,
    });
    expect(chosen.identity.merchantKeysGenerated).toBe(false);
  });

  it('refuses an http PUBLIC_URL and an open /metrics in production, unless plain HTTP is allowed on purpose', () => {
    const production = {
      NODE_ENV: 'production',
      PROVIDER: 'sandbox',
      IDENTITY: 'bank',
      MERCHANT_KEYS: 'merchant-key-aaaaaaaaaaaa-0123456789',
      TOKEN_ENCRYPTION_KEY: 'ab'.repeat(32),
    };
    const token = { METRICS_TOKEN: 'metrics-token-0123456789' };
    expect(problemsOf({ ...production, ...token, PUBLIC_URL: 'http://gateway.example' })).toEqual([
      'PUBLIC_URL must be an https:// address with NODE_ENV=production (cookies are marked Secure only on https); got "http://gateway.example". Set ALLOW_INSECURE_PUBLIC_URL=true to run on plain HTTP anyway',
    ]);
    expect(problemsOf({ ...production, ...token, PORT: '0' })).toEqual([expect.stringMatching(/^PUBLIC_URL must be an https:\/\/ address.*got none/)]);
    expect(loadConfig({ ...production, ...token, PUBLIC_URL: 'http://gateway.example', ALLOW_INSECURE_PUBLIC_URL: 'true' }).server.publicUrl).toBe(
      'http://gateway.example',
    );
    expect(problemsOf({ ...production, PUBLIC_URL: 'https://gateway.example' })).toEqual([
      'METRICS_TOKEN is required with NODE_ENV=production: GET /metrics then needs "Authorization: Bearer <METRICS_TOKEN>" (at least 16 characters without spaces)',
    ]);
    expect(problemsOf({ ...production, ...token, PUBLIC_URL: 'https://gateway.example', ALLOW_INSECURE_PUBLIC_URL: 'yes' })).toEqual([
      'ALLOW_INSECURE_PUBLIC_URL must be one of true, false; got "yes"',
    ]);
    // Outside production, the development defaults stand.
    expect(loadConfig({ PUBLIC_URL: 'http://localhost:4000' }).observability.metricsToken).toBeUndefined();
  });

  it('reads AUTH_MAX_TOKEN_AGE as a duration, 24 h by default', () => {
    const identity = { AUTH_JWKS_URL: 'https://idp.example/jwks', AUTH_ISSUER: 'https://idp.example/', AUTH_AUDIENCE: 'api' };
    expect(loadConfig(identity).identity.app?.maxTokenAgeSeconds).toBe(86_400);
    expect(loadConfig({ ...identity, AUTH_MAX_TOKEN_AGE: '90m' }).identity.app?.maxTokenAgeSeconds).toBe(5_400);
    expect(loadConfig({ ...identity, AUTH_MAX_TOKEN_AGE: '3600' }).identity.app?.maxTokenAgeSeconds).toBe(3_600);
    expect(problemsOf({ ...identity, AUTH_MAX_TOKEN_AGE: '100y' })).toEqual([
      'AUTH_MAX_TOKEN_AGE must be a duration from 60 s to 30 d: whole seconds or a number with s, m, h or d (e.g. 24h); got "100y"',
    ]);
    expect(problemsOf({ AUTH_MAX_TOKEN_AGE: '1h' })).toEqual(['AUTH_MAX_TOKEN_AGE is only used with AUTH_JWKS_URL, AUTH_ISSUER and AUTH_AUDIENCE']);
  });

  it('reads ALLOWED_ORIGINS as origins and refuses anything else', () => {
    expect(loadConfig({}).server.allowedOrigins).toEqual([]);
    expect(loadConfig({ ALLOWED_ORIGINS: 'https://app.example.com, http://localhost:3000/' }).server.allowedOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:3000',
    ]);
    expect(problemsOf({ ALLOWED_ORIGINS: 'https://app.example.com/path' })).toEqual([
      'ALLOWED_ORIGINS must be a comma-separated list of origins like https://app.example.com (no path); got "https://app.example.com/path"',
    ]);
  });

  it('reads CORS_ORIGINS as exact origins (nothing by default), merges ALLOWED_ORIGINS into it, and names a bad entry with what is accepted', () => {
    expect(loadConfig({}).server.corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: 'http://localhost:5173, https://app.example.com/' }).server.corsOrigins).toEqual([
      'http://localhost:5173',
      'https://app.example.com',
    ]);
    expect(loadConfig({ CORS_ORIGINS: 'http://localhost:5173', ALLOWED_ORIGINS: 'https://app.example.com, http://localhost:5173' }).server.corsOrigins).toEqual(
      ['http://localhost:5173', 'https://app.example.com'],
    );
    for (const bad of [
      '*',
      'https://*.example.com',
      'localhost:5173',
      'https://app.example.com/app',
      'HTTPS://App.example.com',
      'https://app.example.com:443',
      'null',
    ]) {
      expect(problemsOf({ CORS_ORIGINS: `http://localhost:5173,${bad}` })).toEqual([
        `CORS_ORIGINS must be a comma-separated list of exact origins, scheme://host[:port] as a browser sends them (http://localhost:5173, https://app.example.com): no path, no wildcard, lower case, no default port; got ${JSON.stringify(bad)}`,
      ]);
    }
  });

  it('refuses provider settings that the embedded sandbox would silently ignore', () => {
    expect(problemsOf({ CLIENT_SECRET: 'x' })).toEqual(['CLIENT_SECRET is only used with PROVIDER=remote; with PROVIDER=sandbox the sandbox provides it']);
  });

  it('has documented operation limits, rate limit and shutdown defaults', () => {
    const config = loadConfig({});
    expect(config.limits.operation).toEqual({ maxDepth: 15, maxAliases: 30, maxDirectives: 50, maxTokens: 5_000, maxCost: 20_000, maxBodyBytes: 102_400 });
    expect(config.limits.rateLimit).toEqual({ perSecond: 20, burst: 60, webhookPerSecond: 50, webhookBurst: 200, storeTimeoutMs: 250 });
    expect(config.limits.shutdownTimeoutMs).toBe(10_000);
    expect(config.observability.metricsToken).toBeUndefined();
    expect(config.provider.kind).toBe('sandbox');
  });

  it('names bad limit, rate-limit and operations settings', () => {
    expect(
      problemsOf({
        GRAPHQL_MAX_DEPTH: '0',
        GRAPHQL_MAX_COST: 'lots',
        GRAPHQL_MAX_BODY_BYTES: '10',
        RATE_LIMIT_PER_SECOND: '-1',
        RATE_LIMIT_BURST: '0',
        SHUTDOWN_TIMEOUT_MS: '1.5',
        METRICS_TOKEN: 'short',
      }),
    ).toEqual([
      'GRAPHQL_MAX_DEPTH must be an integer from 1 to 1000; got "0"',
      'GRAPHQL_MAX_COST must be an integer from 1 to 100000000; got "lots"',
      'GRAPHQL_MAX_BODY_BYTES must be an integer from 1024 to 67108864; got "10"',
      'RATE_LIMIT_PER_SECOND must be a number from 0 to 1000000; got "-1"',
      'RATE_LIMIT_BURST must be an integer from 1 to 1000000; got "0"',
      'SHUTDOWN_TIMEOUT_MS must be an integer from 0 to 600000; got "1.5"',
      'METRICS_TOKEN must be at least 16 characters without spaces',
    ]);
    expect(loadConfig({ RATE_LIMIT_PER_SECOND: '0.5', GRAPHQL_MAX_DEPTH: '8' })).toMatchObject({
      limits: { rateLimit: { perSecond: 0.5 }, operation: { maxDepth: 8 } },
    });
  });
});

describe('loadConfig: sessions and WebSockets', () => {
  it('has documented defaults: a 12 h idle timeout, a check every minute, and the caps on live work', () => {
    expect(loadConfig({}).live).toEqual({
      sessionIdleTimeoutMs: 12 * 3_600_000,
      principalRecheckMs: 60_000,
      maxSubscriptionsPerSocket: 100,
      maxSubscriptionsPerPrincipal: 1_000,
      maxSocketsPerPrincipal: 50,
      streamHeartbeatMs: 12_000,
    });
  });

  it('reads SESSION_IDLE_TIMEOUT as a duration with its unit, and names what is wrong', () => {
    expect(loadConfig({ SESSION_IDLE_TIMEOUT: '30m' }).live.sessionIdleTimeoutMs).toBe(1_800_000);
    expect(loadConfig({ SESSION_IDLE_TIMEOUT: '2d' }).live.sessionIdleTimeoutMs).toBe(172_800_000);
    const problem = (value: string): string =>
      `SESSION_IDLE_TIMEOUT must be a whole number with a unit (ms, s, m, h or d), e.g. 12h, from 1000 ms to 365 days; got ${JSON.stringify(value)}`;
    expect(problemsOf({ SESSION_IDLE_TIMEOUT: '12' })).toEqual([problem('12')]);
    expect(problemsOf({ SESSION_IDLE_TIMEOUT: '500ms' })).toEqual([problem('500ms')]);
    expect(problemsOf({ SESSION_IDLE_TIMEOUT: '1.5h' })).toEqual([problem('1.5h')]);
    expect(problemsOf({ WS_MAX_SUBSCRIPTIONS_PER_SOCKET: '0', WS_PRINCIPAL_RECHECK_MS: '10' })).toEqual([
      'WS_PRINCIPAL_RECHECK_MS must be an integer from 100 to 3600000; got "10"',
      'WS_MAX_SUBSCRIPTIONS_PER_SOCKET must be an integer from 1 to 1000000; got "0"',
    ]);
  });
});

describe('loadConfig: webhooks and status watches', () => {
  it('has documented defaults: 64 KiB bodies, 5 min of skew, a JWKS refetch every 5 s at most, watches from 500 ms to 10 s', () => {
    const config = loadConfig({});
    expect(config.webhooks).toEqual({ maxBodyBytes: 65_536, maxSkewMs: 300_000, jwksMinRefetchIntervalMs: 5_000 });
    expect(config.watches).toEqual({ status: { initialDelayMs: 500, maxDelayMs: 10_000, factor: 2, leaseTtlMs: 30_000 }, refundStateReuseMs: 1_000 });
  });

  it('reads each as a duration or a number, and refuses a lease that would lapse between two reads', () => {
    const config = loadConfig({ WEBHOOK_MAX_SKEW: '2m', STATUS_WATCH_MAX_DELAY: '30s', STATUS_WATCH_LEASE_TTL: '1m', STATUS_WATCH_BACKOFF_FACTOR: '1.5' });
    expect(config.webhooks.maxSkewMs).toBe(120_000);
    expect(config.watches.status).toMatchObject({ maxDelayMs: 30_000, leaseTtlMs: 60_000, factor: 1.5 });
    expect(problemsOf({ STATUS_WATCH_MAX_DELAY: '1m' })).toEqual([
      'STATUS_WATCH_LEASE_TTL must be longer than STATUS_WATCH_MAX_DELAY: the lease is renewed on every read, and reads come that far apart',
    ]);
    expect(problemsOf({ WEBHOOK_MAX_BODY_BYTES: '100' })).toEqual(['WEBHOOK_MAX_BODY_BYTES must be an integer from 1024 to 16777216; got "100"']);
  });
});

describe('loadConfig: OpenTelemetry (the standard OTEL_* variables)', () => {
  it('leaves tracing off when neither an endpoint nor an exporter is asked for', () => {
    expect(loadConfig({}).observability.telemetry).toMatchObject({ exporter: undefined, serviceName: 'bankgraph', sampler: 'parentbased_always_on' });
  });

  it('exports OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces, or to the traces endpoint as given', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).observability.telemetry).toMatchObject({
      exporter: 'otlp',
      tracesUrl: 'http://collector:4318/v1/traces',
    });
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp' }).observability
        .telemetry,
    ).toMatchObject({ exporter: 'otlp', tracesUrl: 'https://traces.example/otlp' });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp' }).observability.telemetry).toMatchObject({
      exporter: 'otlp',
      tracesUrl: 'http://localhost:4318/v1/traces',
    });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }).observability.telemetry.exporter).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).observability.telemetry.exporter).toBeUndefined();
  });

  it('reads headers, resource attributes, service name and sampler', () => {
    const { telemetry } = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%3D%3D,x-team=payments',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=staging',
      OTEL_SERVICE_NAME: 'bankgraph-eu',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    }).observability;
    expect(telemetry).toMatchObject({
      headers: { 'x-api-key': 'abc==', 'x-team': 'payments' },
      resourceAttributes: { 'deployment.environment': 'staging' },
      serviceName: 'bankgraph-eu',
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.25,
    });
  });

  it('refuses bad values, naming the variable and never echoing header values', () => {
    const problems = problemsOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
      OTEL_TRACES_SAMPLER: 'sometimes',
      OTEL_EXPORTER_OTLP_HEADERS: 'secret-api-key-without-equals',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    });
    expect(problems).toEqual([
      expect.stringMatching(/^OTEL_EXPORTER_OTLP_ENDPOINT must be an absolute http\(s\) URL/),
      expect.stringMatching(/^OTEL_EXPORTER_OTLP_PROTOCOL must be http\/json/),
      expect.stringMatching(/^OTEL_TRACES_SAMPLER must be one of always_on, always_off/),
      'OTEL_EXPORTER_OTLP_HEADERS must be a comma-separated list of key=value pairs',
    ]);
    expect(problems.join('\n')).not.toContain('secret-api-key');
  });

  it('refuses a traces protocol the exporter would ignore, and leaves the SDK its own variables', () => {
    expect(problemsOf({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' })).toEqual([
      'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be http/json (the gateway exports OTLP over HTTP with JSON; collectors accept it on the http/protobuf port); got "grpc"',
    ]);
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TIMEOUT: '2000', OTEL_BSP_SCHEDULE_DELAY: '500' }).observability
        .telemetry.exporter,
    ).toBeUndefined();
  });
});

describe('loadConfig: persisted documents', () => {
  it('is off by default, and only needs a manifest', () => {
    const apqQuota = { documents: 200, bytes: 1024 * 1024 };
    expect(loadConfig({}).persistedDocuments).toEqual({ mode: 'off', manifestPath: undefined, apqQuota });
    expect(loadConfig({ PERSISTED_DOCUMENTS: 'allow' }).persistedDocuments).toEqual({ mode: 'allow', manifestPath: undefined, apqQuota });
    expect(problemsOf({ PERSISTED_DOCUMENTS: 'only' })).toEqual([expect.stringMatching(/^PERSISTED_DOCUMENTS=only needs PERSISTED_DOCUMENTS_MANIFEST/)]);
    expect(problemsOf({ PERSISTED_DOCUMENTS: 'strict' })).toEqual(['PERSISTED_DOCUMENTS must be one of off, allow, only; got "strict"']);
    expect(problemsOf({ PERSISTED_DOCUMENTS_MANIFEST: 'manifest.json' })).toEqual([expect.stringMatching(/only used with PERSISTED_DOCUMENTS=allow or only/)]);
  });

  it('reads the APQ quota per principal', () => {
    expect(
      loadConfig({ PERSISTED_DOCUMENTS: 'allow', PERSISTED_DOCUMENTS_APQ_MAX_DOCUMENTS: '10', PERSISTED_DOCUMENTS_APQ_MAX_BYTES: '2048' }).persistedDocuments
        .apqQuota,
    ).toEqual({
      documents: 10,
      bytes: 2048,
    });
    expect(problemsOf({ PERSISTED_DOCUMENTS_APQ_MAX_DOCUMENTS: 'many' })).toEqual([
      'PERSISTED_DOCUMENTS_APQ_MAX_DOCUMENTS must be an integer from 0 to 1000000; got "many"',
    ]);
  });
});

describe('loadConfig: what production refuses besides development defaults', () => {
  const pem = generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const STRONG_KEY = 'mk_Q3v9TzL1pW8rXc2NbY7hKd4sGf6Ja0Ue';
  const remote = {
    NODE_ENV: 'production',
    PROVIDER: 'remote',
    IDENTITY: 'bank',
    AUTH_URL: 'https://auth.example.test',
    VERIFICATION_URL: 'https://verify.example.test',
    PAYOUT_URL: 'https://payouts.example.test',
    PAYMENTS_URL: 'https://payments.example.test',
    DATA_URL: 'https://data.example.test',
    CLIENT_ID: 'client',
    CLIENT_SECRET: 'client-secret-0123456789',
    SIGNING_KEY_ID: 'kid-1',
    SIGNING_KEY_PEM: pem,
    WEBHOOK_JWKS_URLS: 'https://keys.example.test/jwks',
    MERCHANT_KEYS: STRONG_KEY,
    TOKEN_ENCRYPTION_KEY: 'ab'.repeat(32),
    PUBLIC_URL: 'https://gateway.example',
    METRICS_TOKEN: 'metrics-token-0123456789',
  };

  it('accepts a production configuration on https with strong merchant keys and a rate limit', () => {
    expect(loadConfig(remote).provider).toMatchObject({ authUrl: 'https://auth.example.test' });
  });

  it('refuses plain-http provider addresses and webhook JWKS, naming each, unless ALLOW_INSECURE_PROVIDER_URLS=true', () => {
    const insecure = {
      ...remote,
      AUTH_URL: 'http://auth.example.test',
      PAYOUT_URL: 'http://user:hunter2@payouts.example.test/v3',
      WEBHOOK_JWKS_URLS: 'https://keys.example.test/jwks, http://keys2.example.test/jwks',
    };
    const problems = problemsOf(insecure);
    expect(problems).toEqual([
      'AUTH_URL must be an https:// address with NODE_ENV=production (provider calls carry client credentials, bank tokens and signed payouts); got http://auth.example.test. Set ALLOW_INSECURE_PROVIDER_URLS=true for a provider reached over plain HTTP on purpose (one on this machine)',
      'PAYOUT_URL must be an https:// address with NODE_ENV=production (provider calls carry client credentials, bank tokens and signed payouts); got http://payouts.example.test. Set ALLOW_INSECURE_PROVIDER_URLS=true for a provider reached over plain HTTP on purpose (one on this machine)',
      "WEBHOOK_JWKS_URLS entry 2 (counting from 1) must be an https:// address with NODE_ENV=production (its keys decide which webhooks are the provider's); got http://keys2.example.test. Set ALLOW_INSECURE_PROVIDER_URLS=true for a provider reached over plain HTTP on purpose (one on this machine)",
    ]);
    // A URL's credentials are never repeated.
    expect(problems.join('\n')).not.toContain('hunter2');
    expect(loadConfig({ ...insecure, ALLOW_INSECURE_PROVIDER_URLS: 'true' }).provider).toMatchObject({ authUrl: 'http://auth.example.test' });
    expect(problemsOf({ ...remote, ALLOW_INSECURE_PROVIDER_URLS: 'yes' })).toEqual(['ALLOW_INSECURE_PROVIDER_URLS must be one of true, false; got "yes"']);
    // Outside production a provider on plain HTTP (a local one) is accepted as it is.
    expect(loadConfig({ ...insecure, NODE_ENV: 'development' }).provider).toMatchObject({ authUrl: 'http://auth.example.test' });
  });

  it('refuses a plain-http AUTH_JWKS_URL in production, whatever ALLOW_INSECURE_PROVIDER_URLS says', () => {
    const app = { ...remote, IDENTITY: 'app', AUTH_ISSUER: 'https://idp.example/', AUTH_AUDIENCE: 'api' };
    expect(loadConfig({ ...app, AUTH_JWKS_URL: 'https://idp.example/jwks' }).identity.app?.jwksUrl).toBe('https://idp.example/jwks');
    const problem =
      'AUTH_JWKS_URL must be an https:// address with NODE_ENV=production (the keys it serves decide who every user is); got http://idp.example. ALLOW_INSECURE_PROVIDER_URLS does not cover the identity provider';
    expect(problemsOf({ ...app, AUTH_JWKS_URL: 'http://idp.example/jwks' })).toEqual([problem]);
    expect(problemsOf({ ...app, AUTH_JWKS_URL: 'http://idp.example/jwks', ALLOW_INSECURE_PROVIDER_URLS: 'true' })).toEqual([problem]);
    expect(loadConfig({ ...app, NODE_ENV: 'development', AUTH_JWKS_URL: 'http://127.0.0.1:9000/jwks' }).identity.app?.jwksUrl).toBe(
      'http://127.0.0.1:9000/jwks',
    );
  });

  it('refuses merchant keys under 32 characters, of few distinct characters or one sequence repeated, naming the key by position only', () => {
    const weak = ['a'.repeat(40), 'Short-but-16-chars-x', STRONG_KEY, 'Xy7#Qw2!Lm'.repeat(4), 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaabcdef'];
    const problems = problemsOf({ ...remote, MERCHANT_KEYS: weak.join(',') });
    const advice =
      'production needs keys of at least 32 characters with at least 8 different characters, not one sequence repeated (e.g. openssl rand -base64 32)';
    expect(problems).toEqual([
      `MERCHANT_KEYS key 1 (counting from 1) has fewer than 8 different characters: ${advice}`,
      `MERCHANT_KEYS key 2 (counting from 1) is shorter than 32 characters: ${advice}`,
      `MERCHANT_KEYS key 4 (counting from 1) is one short sequence repeated: ${advice}`,
      `MERCHANT_KEYS key 5 (counting from 1) has fewer than 8 different characters: ${advice}`,
    ]);
    for (const key of weak) expect(problems.join('\n')).not.toContain(key);
    // Random keys as the usual tools make them pass: hex (16 possible characters) and base64.
    expect(
      loadConfig({ ...remote, MERCHANT_KEYS: '3f9c0a7e12b45d86e0f1c2a3b4d5e6f7,kX2v+9LqP0rT7wYz3NcB5mH8jD1sF4gA6eR0uI2oQ4=' }).identity.merchantKeys,
    ).toHaveLength(2);
    // Outside production the 16-character rule stands.
    expect(loadConfig({ ...remote, NODE_ENV: 'development', MERCHANT_KEYS: 'Short-but-16-chars-x' }).identity.merchantKeys).toEqual(['Short-but-16-chars-x']);
  });

  it('refuses RATE_LIMIT_PER_SECOND=0 and WEBHOOK_RATE_LIMIT_PER_SECOND=0 in production, unless ALLOW_NO_RATE_LIMIT=true', () => {
    expect(problemsOf({ ...remote, RATE_LIMIT_PER_SECOND: '0', WEBHOOK_RATE_LIMIT_PER_SECOND: '0' })).toEqual([
      'RATE_LIMIT_PER_SECOND=0 turns the rate limit off, which NODE_ENV=production refuses: set a rate above 0 (up to 1000000), or ALLOW_NO_RATE_LIMIT=true when a layer in front limits on purpose',
      'WEBHOOK_RATE_LIMIT_PER_SECOND=0 turns the rate limit off, which NODE_ENV=production refuses: set a rate above 0 (up to 1000000), or ALLOW_NO_RATE_LIMIT=true when a layer in front limits on purpose',
    ]);
    expect(loadConfig({ ...remote, RATE_LIMIT_PER_SECOND: '0', ALLOW_NO_RATE_LIMIT: 'true' }).limits.rateLimit.perSecond).toBe(0);
    expect(problemsOf({ ...remote, ALLOW_NO_RATE_LIMIT: 'on' })).toEqual(['ALLOW_NO_RATE_LIMIT must be one of true, false; got "on"']);
    expect(loadConfig({ ...remote, RATE_LIMIT_PER_SECOND: '1000000' }).limits.rateLimit.perSecond).toBe(1_000_000);
    expect(loadConfig({ RATE_LIMIT_PER_SECOND: '0' }).limits.rateLimit.perSecond).toBe(0);
  });

  it('refuses MCP_ALLOW_ARBITRARY_OPERATIONS=true in production, and reads MCP_MUTATIONS as off or propose', () => {
    expect(problemsOf({ ...remote, MCP_ALLOW_ARBITRARY_OPERATIONS: 'true' })).toEqual([
      'MCP_ALLOW_ARBITRARY_OPERATIONS=true is refused with NODE_ENV=production: agents run only the vetted tools of operations/mcp/ there',
    ]);
    expect(loadConfig({ MCP_ALLOW_ARBITRARY_OPERATIONS: 'true' }).mcp.allowArbitraryOperations).toBe(true);
    expect(loadConfig({ ...remote }).mcp).toEqual({ mutations: 'off', allowArbitraryOperations: false });
    expect(loadConfig({ ...remote, MCP_MUTATIONS: 'propose' }).mcp.mutations).toBe('propose');
    expect(problemsOf({ ...remote, MCP_MUTATIONS: 'all' })).toEqual(['MCP_MUTATIONS must be one of off, propose; got "all"']);
    expect(() => loadConfig({ MCP_AUDIENCE: 'bankgraph-mcp' })).toThrow(
      'MCP_AUDIENCE is only used with app identity (AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE): it is the audience of the app tokens agents present on /mcp',
    );
  });
});

describe('loadConfig: REDIS_KEY_PREFIX', () => {
  it('is bankgraph: by default, and takes letters, digits and : . _ - / { } only', () => {
    expect(loadConfig({}).store.redisKeyPrefix).toBe('bankgraph:');
    expect(loadConfig({ REDIS_KEY_PREFIX: 'shop-eu:bankgraph:' }).store.redisKeyPrefix).toBe('shop-eu:bankgraph:');
    const problem = (value: string): string =>
      `REDIS_KEY_PREFIX must be 1 to 64 letters, digits or any of : . _ - / { } (e.g. bankgraph-eu: or shop-a:bankgraph:); got ${JSON.stringify(value)}`;
    expect(problemsOf({ REDIS_KEY_PREFIX: '' })).toEqual([problem('')]);
    expect(problemsOf({ REDIS_KEY_PREFIX: 'shop*:' })).toEqual([problem('shop*:')]);
    expect(problemsOf({ REDIS_KEY_PREFIX: 'a b' })).toEqual([problem('a b')]);
  });
});

describe('loadConfig: one duration format', () => {
  it('reads every duration as a whole number with its unit', () => {
    const config = loadConfig({ SHUTDOWN_TIMEOUT: '30s', HTTP_BACKOFF_BASE: '250ms', PAYOUT_APPROVAL_EXPIRY: '2d', WS_PRINCIPAL_RECHECK: '5m' });
    expect(config.limits.shutdownTimeoutMs).toBe(30_000);
    expect(config.limits.providerCalls.backoffBaseMs).toBe(250);
    expect(config.money.payoutApprovalExpiryMs).toBe(2 * 86_400_000);
    expect(config.live.principalRecheckMs).toBe(300_000);
    expect(config.notes).toEqual([]);
    expect(problemsOf({ SHUTDOWN_TIMEOUT: '10000' })).toEqual([
      'SHUTDOWN_TIMEOUT must be a whole number with a unit (ms, s, m, h or d), e.g. 12h, from 0 ms to 600000 ms; got "10000"',
    ]);
    expect(problemsOf({ RECONCILE_INTERVAL: '2d' })).toEqual([
      'RECONCILE_INTERVAL must be a whole number with a unit (ms, s, m, h or d), e.g. 12h, from 100 ms to 1 day; got "2d"',
    ]);
  });

  it('still reads the older *_MS spellings, and notes the new one at start', () => {
    const config = loadConfig({ SHUTDOWN_TIMEOUT_MS: '30000', OPERATION_TIMEOUT_MS: '2500' });
    expect(config.limits.shutdownTimeoutMs).toBe(30_000);
    expect(config.limits.operationTimeoutMs).toBe(2_500);
    expect(config.notes).toEqual([
      'OPERATION_TIMEOUT_MS is now OPERATION_TIMEOUT (2500ms); rename the setting',
      'SHUTDOWN_TIMEOUT_MS is now SHUTDOWN_TIMEOUT (30s); rename the setting',
    ]);
    expect(problemsOf({ SHUTDOWN_TIMEOUT: '30s', SHUTDOWN_TIMEOUT_MS: '30000' })).toEqual([
      'SHUTDOWN_TIMEOUT_MS is the older spelling of SHUTDOWN_TIMEOUT: set only SHUTDOWN_TIMEOUT',
    ]);
  });

  it('notes ALLOWED_ORIGINS as the older name of CORS_ORIGINS', () => {
    expect(loadConfig({ ALLOWED_ORIGINS: 'https://app.example.com' }).notes).toEqual([
      'ALLOWED_ORIGINS is now CORS_ORIGINS: its origins are admitted as CORS_ORIGINS are, on HTTP too; rename the setting',
    ]);
  });
});

describe('loadConfig: the provider, resolved once', () => {
  it('is the sandbox or the remote provider, never both, and a bad PROVIDER says what is accepted', () => {
    expect(loadConfig({ SANDBOX_PORT: '4010', SANDBOX_LATENCY: '20ms' }).provider).toEqual({
      kind: 'sandbox',
      url: undefined,
      port: 4010,
      latencyMs: 20,
      timeScale: 1,
    });
    expect(problemsOf({ PROVIDER: 'truelayer' })).toEqual(['PROVIDER must be one of sandbox, remote; got "truelayer"']);
  });

  it('keeps which provider PROVIDER chose once the sandbox addresses are known', () => {
    const config = loadConfig({});
    const provider = {
      authUrl: 'http://127.0.0.1:4010',
      verificationUrl: 'http://127.0.0.1:4010',
      payoutUrl: 'http://127.0.0.1:4010',
      paymentsUrl: 'http://127.0.0.1:4010',
      dataUrl: 'http://127.0.0.1:4010',
      clientId: 'client',
      clientSecret: 'secret',
      signingKey: { keyId: 'kid', privateKeyPem: 'pem' },
      webhookJwksUrls: ['http://127.0.0.1:4010/.well-known/jwks'],
    };
    expect(withProvider(config, provider).provider).toEqual({ ...provider, kind: 'sandbox' });
  });
});
