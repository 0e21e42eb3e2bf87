import { createPublicKey, type KeyObject } from 'node:crypto';

/** The JWKS could not be read and no key for the kid is known: the delivery cannot be checked now (503, retried). */
export class JwksUnavailableError extends Error {
  override readonly name = 'JwksUnavailableError';
}

export interface JwksCacheOptions {
  /** An unknown kid re-fetches a JWKS only if the last fetch of it is at least this old. Default 5 s. */
  minRefetchIntervalMs?: number;
  now?: () => number;
}

interface CachedJwks {
  keys: Map<string, KeyObject>;
  fetchedAt: number;
  fetching?: Promise<void>;
}

/**
 * Webhook signing keys, by JWKS address and kid. Only addresses on the allow-list (WEBHOOK_JWKS_URLS) are ever
 * fetched: a JWS names its own `jku`, and fetching whatever it names would let anyone sign with a key they host
 * (and make the gateway request arbitrary URLs). Keys are cached by kid; an unknown kid makes one re-fetch (key
 * rotation), but not more often than `minRefetchIntervalMs`, so a stream of made-up kids cannot turn every
 * delivery into a fetch. Concurrent look-ups share one fetch.
 */
export class JwksKeyCache {
  private readonly allowed: Set<string>;
  private readonly cache = new Map<string, CachedJwks>();
  private readonly minRefetchIntervalMs: number;
  private readonly now: () => number;

  constructor(
    allowList: readonly string[],
    private readonly fetchJwks: (url: string) => Promise<unknown>,
    options: JwksCacheOptions = {},
  ) {
    this.allowed = new Set(allowList);
    this.minRefetchIntervalMs = options.minRefetchIntervalMs ?? 5_000;
    this.now = options.now ?? Date.now;
  }

  /** Exact match: no normalisation, so `https://a/jwks?x` or `https://a/jwks/` are different (and refused). */
  isAllowed(jku: string): boolean {
    return this.allowed.has(jku);
  }

  /** The key for `kid` at `jku`, or undefined when the JWKS (re-fetched at most once) has none. */
  async keyFor(jku: string, kid: string): Promise<KeyObject | undefined> {
    if (!this.isAllowed(jku)) return undefined;
    let entry = this.cache.get(jku);
    const known = entry?.keys.get(kid);
    if (known) return known;
    if (entry && !entry.fetching && this.now() - entry.fetchedAt < this.minRefetchIntervalMs) return undefined;
    try {
      await this.refresh(jku);
    } catch (error) {
      throw new JwksUnavailableError(`the JWKS at ${jku} could not be read`, { cause: error });
    }
    entry = this.cache.get(jku);
    return entry?.keys.get(kid);
  }

  private refresh(jku: string): Promise<void> {
    const entry = this.cache.get(jku);
    if (entry?.fetching) return entry.fetching;
    const fetching = this.fetchJwks(jku).then(
      (body) => {
        this.cache.set(jku, { keys: parseJwks(body), fetchedAt: this.now() });
      },
      (error: unknown) => {
        // Keep what was known; a failed fetch still counts as a recent one, so a dead JWKS is not hammered.
        this.cache.set(jku, { keys: entry?.keys ?? new Map(), fetchedAt: this.now() });
        throw error;
      },
    );
    this.cache.set(jku, { keys: entry?.keys ?? new Map(), fetchedAt: entry?.fetchedAt ?? 0, fetching });
    return fetching;
  }
}

/** ES512 keys (EC P-521) by kid; anything else in the set is ignored, as is a key without a kid. */
export function parseJwks(body: unknown): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  const list = (body as { keys?: unknown } | undefined)?.keys;
  if (!Array.isArray(list)) throw new Error('the JWKS has no "keys" array');
  for (const jwk of list as Record<string, unknown>[]) {
    if (typeof jwk !== 'object' || jwk === null) continue;
    if (typeof jwk.kid !== 'string' || jwk.kty !== 'EC' || jwk.crv !== 'P-521') continue;
    if (jwk.alg !== undefined && jwk.alg !== 'ES512') continue;
    if (jwk.use !== undefined && jwk.use !== 'sig') continue;
    try {
      keys.set(jwk.kid, createPublicKey({ key: { kty: 'EC', crv: 'P-521', x: jwk.x, y: jwk.y } as never, format: 'jwk' }));
    } catch {
      // A malformed key is skipped; the others stay usable.
    }
  }
  return keys;
}
