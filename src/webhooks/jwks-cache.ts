import { KeyObject } from 'node:crypto';

type Jose = typeof import('jose', { with: { 'resolution-mode': 'import' } });
type RemoteKeySet = ReturnType<Jose['createRemoteJWKSet']>;

/** The JWKS could not be read and no key for the kid is known: the delivery cannot be checked now (503, retried). */
export class JwksUnavailableError extends Error {
  override readonly name = 'JwksUnavailableError';
}

export interface JwksCacheOptions {
  /** An unknown kid re-fetches a JWKS only if the last fetch of it is at least this old. */
  minRefetchIntervalMs: number;
}

/**
 * Webhook signing keys, by JWKS address and kid: one jose remote key set per address (as for app tokens). Only
 * addresses on the allow-list (WEBHOOK_JWKS_URLS) are ever fetched: a JWS names its own `jku`, and fetching whatever
 * it names would let anyone sign with a key they host (and make the gateway request arbitrary URLs). Keys are cached
 * by kid and never expire; an unknown kid makes one re-fetch (key rotation), but not more often than
 * `minRefetchIntervalMs`, so a stream of made-up kids cannot turn every delivery into a fetch. Concurrent look-ups
 * share one fetch. Only ES512 (EC P-521) signing keys are used. jose is ESM-only, so it is loaded with import().
 */
export class JwksKeyCache {
  private readonly sets = new Map<string, Promise<AllowedJwks>>();
  private readonly minRefetchIntervalMs: number;

  constructor(
    private readonly allowList: readonly string[],
    private readonly fetchJwks: (url: string) => Promise<unknown>,
    options: JwksCacheOptions,
  ) {
    this.minRefetchIntervalMs = options.minRefetchIntervalMs;
  }

  /** Exact match: no normalisation, so `https://a/jwks?x` or `https://a/jwks/` are different (and refused). */
  isAllowed(jku: string): boolean {
    return this.allowList.includes(jku);
  }

  /** The key for `kid` at `jku`, or undefined when the JWKS (re-fetched at most once) has none. */
  async keyFor(jku: string, kid: string): Promise<KeyObject | undefined> {
    if (!this.isAllowed(jku)) return undefined;
    let set = this.sets.get(jku);
    if (!set) this.sets.set(jku, (set = import('jose').then((jose) => new AllowedJwks(jose, jku, this.fetchJwks, this.minRefetchIntervalMs))));
    return (await set).keyFor(kid);
  }
}

/** Thrown through jose by the fetch it is given, so that a JWKS that could not be read is told from a key that is not there. */
class JwksFetchError extends Error {
  override readonly name = 'JwksFetchError';
}

class AllowedJwks {
  private readonly keys: RemoteKeySet;
  /** When the last fetch failed: a failed fetch counts as a recent one too, so a dead JWKS is not hammered. */
  private failedAt: number | undefined;

  constructor(
    private readonly jose: Jose,
    private readonly jku: string,
    private readonly fetchJwks: (url: string) => Promise<unknown>,
    private readonly minRefetchIntervalMs: number,
  ) {
    this.keys = jose.createRemoteJWKSet(new URL(jku), {
      cooldownDuration: minRefetchIntervalMs,
      // A key once published stays usable: the set is read again only for a kid it lacks.
      cacheMaxAge: Number.POSITIVE_INFINITY,
      [jose.customFetch]: () => this.fetch(),
    });
  }

  async keyFor(kid: string): Promise<KeyObject | undefined> {
    try {
      return KeyObject.from(await this.keys({ alg: 'ES512', kid }));
    } catch (error) {
      if (error instanceof JwksFetchError || error instanceof this.jose.errors.JWKSInvalid) {
        throw new JwksUnavailableError(`the JWKS at ${this.jku} could not be read`, { cause: error });
      }
      // No such key (or more than one with the kid), or the one published cannot be imported.
      return undefined;
    }
  }

  /** Through the provider's HTTP client (its timeouts and retries); jose reads the answer as the JWKS response. */
  private async fetch(): Promise<Response> {
    if (this.failedAt !== undefined && Date.now() - this.failedAt < this.minRefetchIntervalMs) {
      throw new JwksFetchError(`the JWKS at ${this.jku} could not be read moments ago`);
    }
    let body: unknown;
    try {
      body = await this.fetchJwks(this.jku);
    } catch (error) {
      this.failedAt = Date.now();
      throw new JwksFetchError(`the JWKS at ${this.jku} could not be read`, { cause: error });
    }
    this.failedAt = undefined;
    return Response.json(body);
  }
}
