import type { Config } from './shape';
import { RENAMED_DURATIONS as RENAMED, type Env, type Variables } from './schema';
import { isUrl } from './variables';

/** Rules between variables, checked once each variable is valid on its own. */
export function crossFieldProblems(vars: Variables, env: Env): string[] {
  const problems: string[] = [];
  if (vars.PROVIDER === 'sandbox' && vars.SANDBOX_URL !== undefined) {
    for (const name of ['SANDBOX_PORT', 'SANDBOX_LATENCY', 'SANDBOX_LATENCY_MS', 'SANDBOX_TIME_SCALE']) {
      if (env[name] !== undefined)
        problems.push(`${name} sets up the embedded sandbox; with SANDBOX_URL, set it where that sandbox runs (npm run sandbox reads it)`);
    }
  }
  problems.push(...identityProblems(vars, env));
  if (vars.PERSISTED_DOCUMENTS === 'only' && vars.PERSISTED_DOCUMENTS_MANIFEST === undefined) {
    problems.push('PERSISTED_DOCUMENTS=only needs PERSISTED_DOCUMENTS_MANIFEST, the JSON file of the documents clients may run (npm run persist writes one)');
  }
  if (vars.PERSISTED_DOCUMENTS === 'off' && vars.PERSISTED_DOCUMENTS_MANIFEST !== undefined) {
    problems.push('PERSISTED_DOCUMENTS_MANIFEST is only used with PERSISTED_DOCUMENTS=allow or only');
  }
  if (vars.STATUS_WATCH_LEASE_TTL <= vars.STATUS_WATCH_MAX_DELAY) {
    problems.push('STATUS_WATCH_LEASE_TTL must be longer than STATUS_WATCH_MAX_DELAY: the lease is renewed on every read, and reads come that far apart');
  }
  for (const [name, old] of renamedPairs(env)) problems.push(`${old} is the older spelling of ${name}: set only ${name}`);
  return problems;
}

/** Both spellings of one duration given: which one is meant cannot be told. */
function renamedPairs(env: Env): [string, string][] {
  return Object.entries(RENAMED).filter(([name, old]) => env[name] !== undefined && env[old] !== undefined);
}

/** The identity the gateway resolves IDENTITY to: `app` when any AUTH_* is given or in production (bank identity only when asked for there). */
function resolvedIdentity(vars: Variables): 'app' | 'bank' {
  const given = vars.AUTH_JWKS_URL !== undefined || vars.AUTH_ISSUER !== undefined || vars.AUTH_AUDIENCE !== undefined;
  return vars.IDENTITY ?? (given || vars.NODE_ENV === 'production' ? 'app' : 'bank');
}

/**
 * IDENTITY: `app` needs all three of AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE; `bank` none of them (bank identity
 * guesses who someone is from what their bank shows, so production runs it only when asked for: docs/identity.md).
 */
function identityProblems(vars: Variables, env: Env): string[] {
  const names = ['AUTH_JWKS_URL', 'AUTH_ISSUER', 'AUTH_AUDIENCE'] as const;
  const given = names.filter((name) => vars[name] !== undefined);
  const problems: string[] = [];
  if (resolvedIdentity(vars) === 'bank') {
    if (given.length > 0)
      problems.push(`${given.join(', ')} ${given.length === 1 ? 'is' : 'are'} only used with IDENTITY=app; IDENTITY=bank signs users in through their bank`);
    if (env.AUTH_ALGORITHMS !== undefined) problems.push('AUTH_ALGORITHMS is only used with AUTH_JWKS_URL, AUTH_ISSUER and AUTH_AUDIENCE');
    if (env.AUTH_MAX_TOKEN_AGE !== undefined) problems.push('AUTH_MAX_TOKEN_AGE is only used with AUTH_JWKS_URL, AUTH_ISSUER and AUTH_AUDIENCE');
  } else if (given.length < names.length) {
    const missing = names.filter((name) => !given.includes(name)).join(', ');
    problems.push(
      given.length === 0 && vars.IDENTITY === undefined
        ? `app identity is the default with NODE_ENV=production: set ${missing} (your app's OIDC provider), or IDENTITY=bank to sign users in through their bank on purpose`
        : `app identity needs all of ${names.join(', ')}; missing ${missing}`,
    );
  }
  if (vars.MCP_AUDIENCE !== undefined && (resolvedIdentity(vars) === 'bank' || given.length < names.length)) {
    problems.push(
      'MCP_AUDIENCE is only used with app identity (AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE): it is the audience of the app tokens agents present on /mcp',
    );
  }
  return problems;
}

/**
 * What production refuses: the defaults that make `npm start` work with no configuration (a merchant key made up
 * and printed, an embedded sandbox with made-up credentials, no encryption key), and settings valid but unsafe.
 */
export function productionProblems(config: Config, vars: Variables, env: Env): string[] {
  const problems: string[] = [];
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
  if (config.identity.tokenEncryptionKey === undefined) {
    problems.push('TOKEN_ENCRYPTION_KEY is required in production: 32 random bytes, base64 or hex (e.g. openssl rand -base64 32)');
  }
  problems.push(...insecureServerProblems(config, vars.ALLOW_INSECURE_PUBLIC_URL));
  problems.push(...insecureProviderProblems(config, vars.ALLOW_INSECURE_PROVIDER_URLS));
  if (env.MERCHANT_KEYS !== undefined) problems.push(...weakMerchantKeyProblems(config.identity.merchantKeys));
  if (!vars.ALLOW_NO_RATE_LIMIT) problems.push(...rateLimitOffProblems(config.limits.rateLimit));
  if (config.mcp.allowArbitraryOperations) {
    problems.push('MCP_ALLOW_ARBITRARY_OPERATIONS=true is refused with NODE_ENV=production: agents run only the vetted tools of operations/mcp/ there');
  }
  return problems;
}

/**
 * An https public address (session and login cookies are `Secure` only on https), and a token on /metrics (which
 * names routes, principals' counts and provider failures). ALLOW_INSECURE_PUBLIC_URL=true is for a deployment that
 * knows its TLS ends in front of a plain-HTTP PUBLIC_URL it cannot change.
 */
function insecureServerProblems(config: Config, allowInsecurePublicUrl: boolean): string[] {
  const problems: string[] = [];
  const { publicUrl } = config.server;
  if (!allowInsecurePublicUrl && !publicUrl?.startsWith('https:')) {
    problems.push(
      `PUBLIC_URL must be an https:// address with NODE_ENV=production (cookies are marked Secure only on https); got ${publicUrl === undefined ? 'none (the listening address, http)' : JSON.stringify(publicUrl)}. Set ALLOW_INSECURE_PUBLIC_URL=true to run on plain HTTP anyway`,
    );
  }
  if (config.observability.metricsToken === undefined) {
    problems.push(
      'METRICS_TOKEN is required with NODE_ENV=production: GET /metrics then needs "Authorization: Bearer <METRICS_TOKEN>" (at least 16 characters without spaces)',
    );
  }
  return problems;
}

const INSECURE_PROVIDER_HINT = 'Set ALLOW_INSECURE_PROVIDER_URLS=true for a provider reached over plain HTTP on purpose (one on this machine)';

/**
 * Plain-HTTP addresses of the provider and of the keys that authenticate it or the users: anyone on the path could
 * read the credentials sent there or serve keys of their own. A value is named by its origin only, so credentials
 * written into a URL are never repeated. PROVIDER=sandbox has no such addresses.
 */
function insecureProviderProblems(config: Config, allowInsecure: boolean): string[] {
  const problems: string[] = [];
  const plain = (url: string): string | undefined => (url.startsWith('https:') ? undefined : new URL(url).origin);
  const { provider } = config;
  if (provider.kind === 'remote' && !allowInsecure) {
    const named = {
      AUTH_URL: provider.authUrl,
      VERIFICATION_URL: provider.verificationUrl,
      PAYOUT_URL: provider.payoutUrl,
      PAYMENTS_URL: provider.paymentsUrl,
      DATA_URL: provider.dataUrl,
    };
    for (const [name, url] of Object.entries(named)) {
      const origin = plain(url);
      if (origin !== undefined)
        problems.push(
          `${name} must be an https:// address with NODE_ENV=production (provider calls carry client credentials, bank tokens and signed payouts); got ${origin}. ${INSECURE_PROVIDER_HINT}`,
        );
    }
    provider.webhookJwksUrls.forEach((url, index) => {
      const origin = isUrl(url, ['http:', 'https:']) ? plain(url) : undefined;
      if (origin !== undefined)
        problems.push(
          `WEBHOOK_JWKS_URLS entry ${index + 1} (counting from 1) must be an https:// address with NODE_ENV=production (its keys decide which webhooks are the provider's); got ${origin}. ${INSECURE_PROVIDER_HINT}`,
        );
    });
  }
  // The identity provider is another party than the payments provider: its keys mint every user, so no flag allows it.
  const jwks = config.identity.app?.jwksUrl;
  const jwksOrigin = jwks === undefined ? undefined : plain(jwks);
  if (jwksOrigin !== undefined) {
    problems.push(
      `AUTH_JWKS_URL must be an https:// address with NODE_ENV=production (the keys it serves decide who every user is); got ${jwksOrigin}. ALLOW_INSECURE_PROVIDER_URLS does not cover the identity provider`,
    );
  }
  return problems;
}

const MERCHANT_KEY_MIN_LENGTH = 32;
const MERCHANT_KEY_MIN_DISTINCT = 8;

/**
 * Merchant keys a person could guess or type from memory. Eight distinct characters let random hex (16 symbols)
 * through with certainty in practice while refusing one letter or a short word repeated. A key is named by its
 * position in MERCHANT_KEYS, never by its value.
 */
function weakMerchantKeyProblems(keys: string[]): string[] {
  const advice = `production needs keys of at least ${MERCHANT_KEY_MIN_LENGTH} characters with at least ${MERCHANT_KEY_MIN_DISTINCT} different characters, not one sequence repeated (e.g. openssl rand -base64 32)`;
  return keys.flatMap((key, index) => {
    const weakness =
      key.length < MERCHANT_KEY_MIN_LENGTH
        ? `is shorter than ${MERCHANT_KEY_MIN_LENGTH} characters`
        : new Set(key).size < MERCHANT_KEY_MIN_DISTINCT
          ? `has fewer than ${MERCHANT_KEY_MIN_DISTINCT} different characters`
          : isRepetition(key)
            ? 'is one short sequence repeated'
            : undefined;
    return weakness === undefined ? [] : [`MERCHANT_KEYS key ${index + 1} (counting from 1) ${weakness}: ${advice}`];
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
function rateLimitOffProblems(rateLimit: Config['limits']['rateLimit']): string[] {
  const off = { RATE_LIMIT_PER_SECOND: rateLimit.perSecond, WEBHOOK_RATE_LIMIT_PER_SECOND: rateLimit.webhookPerSecond };
  return Object.entries(off)
    .filter(([, perSecond]) => perSecond === 0)
    .map(
      ([name]) =>
        `${name}=0 turns the rate limit off, which NODE_ENV=production refuses: set a rate above 0 (up to 1000000), or ALLOW_NO_RATE_LIMIT=true when a layer in front limits on purpose`,
    );
}
