import type { AuthClient } from '../datasources/auth.client';
import type { BearerAuth } from '../datasources/http.client';
import type { ProviderTokenResponse } from '../datasources/provider-types';
import { UnauthenticatedError } from '../errors';
import type { ProviderTokens, SessionStore } from '../store/session.store';
import { sessionKey } from '../store/session.store';

/** Refresh this long before expiry, so a token is never sent in its last seconds. */
const REFRESH_MARGIN_MS = 60_000;

export function tokensFrom(response: ProviderTokenResponse, now = Date.now()): ProviderTokens {
  if (!response.refresh_token) throw new UnauthenticatedError('The bank did not grant offline access; sign in again.');
  return { accessToken: response.access_token, refreshToken: response.refresh_token, expiresAtMs: now + response.expires_in * 1000 };
}

/**
 * The provider tokens behind end-user sessions. They never leave the server. A token is refreshed shortly before
 * it expires (or when the provider rejects it), once per session however many requests need it at that moment:
 * refresh tokens rotate, so two refreshes of one session at once would log the user out.
 */
export class UserTokenProvider {
  private readonly refreshing = new Map<string, Promise<ProviderTokens>>();

  constructor(
    private readonly sessions: SessionStore,
    private readonly auth: AuthClient,
    private readonly now: () => number = Date.now,
  ) {}

  /** Bearer auth for one session, for the http client: current token, and refresh-once on a 401. */
  bearerFor(sessionToken: string, initial: ProviderTokens): BearerAuth {
    let tokens = initial;
    return {
      token: async () => {
        if (tokens.expiresAtMs - REFRESH_MARGIN_MS <= this.now()) tokens = await this.refresh(sessionToken, tokens.accessToken);
        return tokens.accessToken;
      },
      onUnauthorized: async (rejectedToken) => {
        tokens = await this.refresh(sessionToken, rejectedToken);
      },
    };
  }

  private refresh(sessionToken: string, staleAccessToken: string): Promise<ProviderTokens> {
    const key = sessionKey(sessionToken);
    const pending = this.refreshing.get(key);
    if (pending) return pending;
    const work = this.refreshOnce(sessionToken, staleAccessToken).finally(() => this.refreshing.delete(key));
    this.refreshing.set(key, work);
    return work;
  }

  private async refreshOnce(sessionToken: string, staleAccessToken: string): Promise<ProviderTokens> {
    const stored = await this.sessions.get(sessionToken, { fresh: true });
    if (!stored) throw new UnauthenticatedError('The session has ended; sign in again at /auth/login.');
    // Another request (or another gateway instance) may have refreshed already: use its tokens.
    if (stored.tokens.accessToken !== staleAccessToken && stored.tokens.expiresAtMs - REFRESH_MARGIN_MS > this.now()) return stored.tokens;
    try {
      const fresh = tokensFrom(await this.auth.refresh(stored.tokens.refreshToken), this.now());
      await this.sessions.updateTokens(sessionToken, fresh);
      return fresh;
    } catch (error) {
      // Lost a rotation race with another instance: its tokens are in the store now.
      const after = await this.sessions.get(sessionToken, { fresh: true });
      if (after && after.tokens.refreshToken !== stored.tokens.refreshToken) return after.tokens;
      throw error;
    }
  }
}
