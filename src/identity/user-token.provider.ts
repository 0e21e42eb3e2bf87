import { growingLru } from '../platform/store/growing-lru';
import type { AuthClient } from '../platform/provider/auth.client';
import type { BearerAuth, CallOptions } from '../platform/provider/http.client';
import type { ProviderTokenResponse } from '../platform/provider/provider-types';
import { UnauthenticatedError } from '../platform/errors/gateway-errors';
import type { ConnectionStore, ProviderTokens } from './connection.store';

/** Refresh this long before expiry, so a token is never sent in its last seconds. */
const REFRESH_MARGIN_MS = 60_000;

export function tokensFrom(response: ProviderTokenResponse, now = Date.now()): ProviderTokens {
  if (!response.refresh_token) throw new UnauthenticatedError('The bank did not grant offline access; sign in again.');
  return { accessToken: response.access_token, refreshToken: response.refresh_token, expiresAtMs: now + response.expires_in * 1000 };
}

/**
 * The provider tokens behind bank connections. They never leave the server. A token is refreshed shortly before
 * it expires (or when the provider rejects it), once per connection however many requests need it at that moment:
 * refresh tokens rotate, so two refreshes of one connection at once would lose it.
 */
export class UserTokenProvider {
  private readonly refreshing = new Map<string, Promise<ProviderTokens>>();
  /** Decrypted tokens, so a request does not read and decrypt them again; the store stays the truth on refresh. */
  private readonly known = growingLru<string, ProviderTokens>(10_000);

  constructor(
    private readonly connections: ConnectionStore,
    private readonly auth: AuthClient,
    private readonly now: () => number = Date.now,
  ) {}

  /** Bearer auth for one connection, for the http client: current token, and refresh-once on a 401. */
  bearerFor(connectionId: string): BearerAuth {
    return {
      connectionId,
      token: async (options) => {
        let tokens = this.known.get(connectionId) ?? (await this.load(connectionId));
        if (tokens.expiresAtMs - REFRESH_MARGIN_MS <= this.now()) tokens = await this.refresh(connectionId, tokens.accessToken, options);
        return tokens.accessToken;
      },
      onUnauthorized: async (rejectedToken, options) => {
        await this.refresh(connectionId, rejectedToken, options);
      },
    };
  }

  /** Forgets a revoked connection's tokens on this instance. */
  forget(connectionId: string): void {
    this.known.delete(connectionId);
  }

  private async load(connectionId: string): Promise<ProviderTokens> {
    const tokens = await this.connections.tokens(connectionId);
    if (!tokens) throw new UnauthenticatedError('This bank connection has ended; connect the bank again.');
    this.known.set(connectionId, tokens);
    return tokens;
  }

  /** `options`: the first asker's (its operation's deadline); the refresh is shared with whoever asks meanwhile. */
  private refresh(connectionId: string, staleAccessToken: string, options?: CallOptions): Promise<ProviderTokens> {
    const pending = this.refreshing.get(connectionId);
    if (pending) return pending;
    const work = this.refreshOnce(connectionId, staleAccessToken, options).finally(() => this.refreshing.delete(connectionId));
    this.refreshing.set(connectionId, work);
    return work;
  }

  private async refreshOnce(connectionId: string, staleAccessToken: string, options?: CallOptions): Promise<ProviderTokens> {
    this.known.delete(connectionId);
    const stored = await this.load(connectionId);
    // Another request (or another gateway instance) may have refreshed already: use its tokens.
    if (stored.accessToken !== staleAccessToken && stored.expiresAtMs - REFRESH_MARGIN_MS > this.now()) return stored;
    try {
      const fresh = tokensFrom(await this.auth.refresh(stored.refreshToken, options), this.now());
      await this.connections.updateTokens(connectionId, fresh);
      this.known.set(connectionId, fresh);
      return fresh;
    } catch (error) {
      // Lost a rotation race with another instance: its tokens are in the store now.
      this.known.delete(connectionId);
      const after = await this.connections.tokens(connectionId);
      if (after && after.refreshToken !== stored.refreshToken) {
        this.known.set(connectionId, after);
        return after;
      }
      // The bank ended the grant for good: the connection shows as EXPIRED until the user connects again.
      if (error instanceof UnauthenticatedError) await this.connections.markExpired(connectionId);
      throw error;
    }
  }
}
