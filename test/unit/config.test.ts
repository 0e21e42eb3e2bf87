import { generateKeyPairSync } from 'node:crypto';
import { ConfigError, loadConfig } from '../../src/config';

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
      port: 4000,
      publicUrl: 'http://localhost:4000',
      provider: 'sandbox',
      sandbox: { port: 4010, latencyMs: 0, timeScale: 1 },
      storeUrl: 'sqlite://./data/gateway.sqlite',
      cacheUrl: 'memory',
      pubsubUrl: 'memory',
      merchantKeysGenerated: true,
    });
    expect(config.merchantKeys).toHaveLength(1);
    expect(Object.isFrozen(config)).toBe(true);
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
    expect(config.merchantKeys).toEqual(['merchant-key-aaaaaaaaaaaa', 'merchant-key-bbbbbbbbbbbb']);
    expect(config.merchantKeysGenerated).toBe(false);
  });

  it('refuses to start in production on development defaults, naming every variable to set', () => {
    expect(problemsOf({ NODE_ENV: 'production' }).sort()).toEqual([
      expect.stringMatching(/^MERCHANT_KEYS is required with NODE_ENV=production/),
      expect.stringMatching(/^PROVIDER is required with NODE_ENV=production/),
      expect.stringMatching(/^TOKEN_ENCRYPTION_KEY is required in production/),
      expect.stringMatching(/^app identity is the default with NODE_ENV=production/),
    ]);
    const key = 'ab'.repeat(32);
    expect(problemsOf({ NODE_ENV: 'production', PROVIDER: 'sandbox', IDENTITY: 'bank', TOKEN_ENCRYPTION_KEY: key })).toEqual([
      expect.stringMatching(/^MERCHANT_KEYS is required/),
    ]);
    const chosen = loadConfig({
      NODE_ENV: 'production',
      PROVIDER: 'sandbox',
      IDENTITY: 'bank',
      MERCHANT_KEYS: 'merchant-key-aaaaaaaaaaaa',
      TOKEN_ENCRYPTION_KEY: key,
    });
    expect(chosen.merchantKeysGenerated).toBe(false);
  });

  it('reads ALLOWED_ORIGINS as origins and refuses anything else', () => {
    expect(loadConfig({}).allowedOrigins).toEqual([]);
    expect(loadConfig({ ALLOWED_ORIGINS: 'https://app.example.com, http://localhost:3000/' }).allowedOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:3000',
    ]);
    expect(problemsOf({ ALLOWED_ORIGINS: 'https://app.example.com/path' })).toEqual([
      'ALLOWED_ORIGINS must be a comma-separated list of origins like https://app.example.com (no path); got "https://app.example.com/path"',
    ]);
  });

  it('refuses provider settings that the embedded sandbox would silently ignore', () => {
    expect(problemsOf({ CLIENT_SECRET: 'x' })).toEqual([
      'CLIENT_SECRET is only used with PROVIDER=remote; with PROVIDER=sandbox the embedded sandbox provides it',
    ]);
  });

  it('has documented operation limits, rate limit and shutdown defaults', () => {
    const config = loadConfig({});
    expect(config.limits).toEqual({ maxDepth: 15, maxAliases: 30, maxDirectives: 50, maxTokens: 5_000, maxCost: 20_000, maxBodyBytes: 102_400 });
    expect(config.rateLimit).toEqual({ perSecond: 20, burst: 60 });
    expect(config.shutdownTimeoutMs).toBe(10_000);
    expect(config.metricsToken).toBeUndefined();
    expect(config.providerKind).toBe('sandbox');
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
    expect(loadConfig({ RATE_LIMIT_PER_SECOND: '0.5', GRAPHQL_MAX_DEPTH: '8' })).toMatchObject({ rateLimit: { perSecond: 0.5 }, limits: { maxDepth: 8 } });
  });
});

describe('loadConfig: OpenTelemetry (the standard OTEL_* variables)', () => {
  it('leaves tracing off when neither an endpoint nor an exporter is asked for', () => {
    expect(loadConfig({}).telemetry).toMatchObject({ exporter: undefined, serviceName: 'bankgraph', sampler: 'parentbased_always_on' });
  });

  it('exports OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces, or to the traces endpoint as given', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).telemetry).toMatchObject({
      exporter: 'otlp',
      tracesUrl: 'http://collector:4318/v1/traces',
    });
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp' }).telemetry,
    ).toMatchObject({ exporter: 'otlp', tracesUrl: 'https://traces.example/otlp' });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp' }).telemetry).toMatchObject({ exporter: 'otlp', tracesUrl: 'http://localhost:4318/v1/traces' });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }).telemetry.exporter).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).telemetry.exporter).toBeUndefined();
  });

  it('reads headers, resource attributes, service name and sampler', () => {
    const { telemetry } = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%3D%3D,x-team=payments',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=staging',
      OTEL_SERVICE_NAME: 'bankgraph-eu',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    });
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
});

describe('loadConfig: persisted documents', () => {
  it('is off by default, and only needs a manifest', () => {
    expect(loadConfig({}).persistedDocuments).toEqual({ mode: 'off', manifestPath: undefined });
    expect(loadConfig({ PERSISTED_DOCUMENTS: 'allow' }).persistedDocuments).toEqual({ mode: 'allow', manifestPath: undefined });
    expect(problemsOf({ PERSISTED_DOCUMENTS: 'only' })).toEqual([expect.stringMatching(/^PERSISTED_DOCUMENTS=only needs PERSISTED_DOCUMENTS_MANIFEST/)]);
    expect(problemsOf({ PERSISTED_DOCUMENTS: 'strict' })).toEqual(['PERSISTED_DOCUMENTS must be one of off, allow, only; got "strict"']);
    expect(problemsOf({ PERSISTED_DOCUMENTS_MANIFEST: 'manifest.json' })).toEqual([expect.stringMatching(/only used with PERSISTED_DOCUMENTS=allow or only/)]);
  });
});
