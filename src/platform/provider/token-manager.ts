/*
 * The application's client-credentials tokens, one per scope (withdrawals need `paydirect`, refunds `payments`;
 * a narrower token per API limits what a leaked token can do). Each is fetched once and shared by every caller
 * until shortly before it expires. However many callers ask while no valid token is cached, exactly one fetch
 * is in flight per scope and they all await it; a failed fetch is not cached, so the next caller tries again.
 */
import { LRUCache } from 'lru-cache';
import type { BearerAuth, CallOptions } from './http.client';
import type { ProviderScope, ProviderTokenResponse } from './provider-types';

export interface ClientCredentialsSource {
  clientCredentials(scope: ProviderScope, options?: CallOptions): Promise<ProviderTokenResponse>;
}

export interface TokenManagerOptions {
  /** A token is replaced this long before it expires, so none is sent in its last moments. Default 60 000 ms. */
  refreshMarginMs?: number;
  /** Milliseconds since the epoch; injectable so tests can move time. */
  now?: () => number;
}

interface CachedToken {
  value: string;
  renewAt: number;
}

export class ClientCredentialsTokenManager {
  /** One entry per scope; its fetchMethod is what makes concurrent askers share one fetch (and not keep a failure). */
  private readonly tokens: LRUCache<ProviderScope, CachedToken, CallOptions | undefined>;
  private readonly refreshMarginMs: number;
  private readonly now: () => number;

  constructor(
    private readonly source: ClientCredentialsSource,
    options: TokenManagerOptions = {},
  ) {
    this.refreshMarginMs = options.refreshMarginMs ?? 60_000;
    this.now = options.now ?? Date.now;
    this.tokens = new LRUCache({ max: 16, fetchMethod: (scope, _expired, { context }) => this.fetch(scope, context) });
  }

  /** `options`: the asker's (its operation's deadline), used when this ask is the one that fetches. */
  getToken(scope: ProviderScope, options?: CallOptions): Promise<string> {
    const cached = this.tokens.get(scope);
    if (cached && this.now() < cached.renewAt) return Promise.resolve(cached.value);
    // forceRefresh: an entry past its renewal is fetched again; a fetch already in flight is joined, not repeated.
    return this.tokens.fetch(scope, { context: options, forceRefresh: true }).then((token) => token!.value);
  }

  /**
   * Drops the cached token after the provider rejected it. With `rejectedToken`, only when that is still the
   * cached one: twenty requests failing with the same stale token then cause one refetch, not twenty.
   */
  invalidate(scope: ProviderScope, rejectedToken?: string): void {
    const cached = this.tokens.peek(scope);
    // Marked for renewal, not deleted: deleting would abort a renewal already in flight, failing everyone awaiting it.
    if (cached && (rejectedToken === undefined || cached.value === rejectedToken)) cached.renewAt = Number.NEGATIVE_INFINITY;
  }

  /** The BearerAuth for requests under `scope`: this manager's token, invalidated on a 401. */
  authFor(scope: ProviderScope): BearerAuth {
    return {
      token: (options) => this.getToken(scope, options),
      onUnauthorized: async (rejectedToken) => this.invalidate(scope, rejectedToken),
    };
  }

  private async fetch(scope: ProviderScope, options?: CallOptions): Promise<CachedToken> {
    const requestedAt = this.now();
    const token = await this.source.clientCredentials(scope, options);
    const lifetimeMs = Math.max(0, token.expires_in) * 1000;
    // A short-lived token would otherwise be "expired" on arrival; then renew it halfway through its life instead.
    const margin = Math.min(this.refreshMarginMs, lifetimeMs / 2);
    return { value: token.access_token, renewAt: requestedAt + lifetimeMs - margin };
  }
}
