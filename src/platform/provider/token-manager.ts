/*
 * The application's client-credentials tokens, one per scope (withdrawals need `paydirect`, refunds `payments`;
 * a narrower token per API limits what a leaked token can do). Each is fetched once and shared by every caller
 * until shortly before it expires. However many callers ask while no valid token is cached, exactly one fetch
 * is in flight per scope and they all await it; a failed fetch is not cached, so the next caller tries again.
 */
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
  private readonly cached = new Map<ProviderScope, CachedToken>();
  private readonly inFlight = new Map<ProviderScope, Promise<string>>();
  private readonly refreshMarginMs: number;
  private readonly now: () => number;

  constructor(
    private readonly source: ClientCredentialsSource,
    options: TokenManagerOptions = {},
  ) {
    this.refreshMarginMs = options.refreshMarginMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** `options`: the asker's (its operation's deadline), used when this ask is the one that fetches. */
  getToken(scope: ProviderScope, options?: CallOptions): Promise<string> {
    const cached = this.cached.get(scope);
    if (cached && this.now() < cached.renewAt) return Promise.resolve(cached.value);
    const pending = this.inFlight.get(scope);
    if (pending) return pending;
    const fetching = this.fetch(scope, options).finally(() => this.inFlight.delete(scope));
    this.inFlight.set(scope, fetching);
    return fetching;
  }

  /**
   * Drops the cached token after the provider rejected it. With `rejectedToken`, only when that is still the
   * cached one: twenty requests failing with the same stale token then cause one refetch, not twenty.
   */
  invalidate(scope: ProviderScope, rejectedToken?: string): void {
    const cached = this.cached.get(scope);
    if (cached && (rejectedToken === undefined || cached.value === rejectedToken)) this.cached.delete(scope);
  }

  /** The BearerAuth for requests under `scope`: this manager's token, invalidated on a 401. */
  authFor(scope: ProviderScope): BearerAuth {
    return {
      token: (options) => this.getToken(scope, options),
      onUnauthorized: async (rejectedToken) => this.invalidate(scope, rejectedToken),
    };
  }

  private async fetch(scope: ProviderScope, options?: CallOptions): Promise<string> {
    const requestedAt = this.now();
    const token = await this.source.clientCredentials(scope, options);
    const lifetimeMs = Math.max(0, token.expires_in) * 1000;
    // A short-lived token would otherwise be "expired" on arrival; then renew it halfway through its life instead.
    const margin = Math.min(this.refreshMarginMs, lifetimeMs / 2);
    this.cached.set(scope, { value: token.access_token, renewAt: requestedAt + lifetimeMs - margin });
    return token.access_token;
  }
}
