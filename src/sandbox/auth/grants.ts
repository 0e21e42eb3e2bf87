import { randomBytes, randomUUID } from 'node:crypto';
import type { SandboxClock } from '../clock';
import { ACCESS_TOKEN_TTL_SECONDS, type AccessTokens } from '../tokens';

export const AUTHORIZATION_CODE_TTL_SECONDS = 60;
/** What the authorization-code grant gives, whatever the authorize step asked for (docs/provider-choices.md, "Tokens"). */
export const USER_TOKEN_SCOPES = ['info', 'accounts'];

export interface AuthorizationCode {
  clientId: string;
  redirectUri: string;
  userId: string;
  codeChallenge?: string;
  expiresAtMs: number;
  /** Set once exchanged; a second exchange revokes what the first one issued (RFC 6749 §4.1.2). */
  sessionId?: string;
}

interface RefreshToken {
  clientId: string;
  userId: string;
  scopes: string[];
  sessionId: string;
  revoked: boolean;
}

export interface UserTokenResponse {
  access_token: string;
  expires_in: number;
  token_type: 'Bearer';
  refresh_token: string;
  scope: string;
}

/** The authorization server's memory: one-time codes and rotating refresh tokens, on sandbox time. */
export class Grants {
  private readonly codes = new Map<string, AuthorizationCode>();
  private readonly refreshTokens = new Map<string, RefreshToken>();

  constructor(
    private readonly clock: SandboxClock,
    private readonly tokens: AccessTokens,
  ) {}

  issueCode(grant: Omit<AuthorizationCode, 'expiresAtMs' | 'sessionId'>): string {
    this.dropExpiredCodes();
    const code = randomBytes(24).toString('base64url');
    this.codes.set(code, { ...grant, expiresAtMs: this.clock.nowMs() + AUTHORIZATION_CODE_TTL_SECONDS * 1000 });
    return code;
  }

  findCode(code: string): AuthorizationCode | undefined {
    return this.codes.get(code);
  }

  isExpired(code: AuthorizationCode): boolean {
    return code.expiresAtMs <= this.clock.nowMs();
  }

  /** Marks the code used and starts a session: an access token and a refresh token. */
  redeemCode(code: AuthorizationCode): UserTokenResponse {
    const sessionId = randomUUID();
    code.sessionId = sessionId;
    return this.issueUserTokens({ clientId: code.clientId, userId: code.userId, scopes: USER_TOKEN_SCOPES, sessionId }, USER_TOKEN_SCOPES);
  }

  /** A replayed code means it leaked: everything its session holds stops working. */
  revokeSession(sessionId: string): void {
    this.tokens.revokeWhere((token) => token.sessionId === sessionId);
    for (const refresh of this.refreshTokens.values()) if (refresh.sessionId === sessionId) refresh.revoked = true;
  }

  findRefreshToken(token: string): Readonly<RefreshToken> | undefined {
    return this.refreshTokens.get(token);
  }

  /**
   * Rotation: the presented refresh token is revoked and a new one issued for the same session, user and scopes.
   * Access tokens already issued keep working until they expire, so requests in flight are not broken.
   */
  rotate(token: string, accessScopes: string[]): UserTokenResponse {
    const refresh = this.refreshTokens.get(token);
    if (!refresh || refresh.revoked) throw new Error('rotate needs a live refresh token');
    refresh.revoked = true;
    const { clientId, userId, scopes, sessionId } = refresh;
    return this.issueUserTokens({ clientId, userId, scopes, sessionId }, accessScopes);
  }

  private issueUserTokens(session: Omit<RefreshToken, 'revoked'>, accessScopes: string[]): UserTokenResponse {
    const access = this.tokens.issue({ clientId: session.clientId, userId: session.userId, scopes: accessScopes, sessionId: session.sessionId });
    const refreshToken = randomBytes(32).toString('base64url');
    this.refreshTokens.set(refreshToken, { ...session, revoked: false });
    return {
      access_token: access.access_token,
      expires_in: access.expires_in,
      token_type: access.token_type,
      refresh_token: refreshToken,
      scope: access.scope,
    };
  }

  /**
   * Codes are kept for an access token's lifetime past their expiry, so a late replay is still recognised as one
   * and still revokes the tokens it could be abusing.
   */
  private dropExpiredCodes(): void {
    const horizonMs = this.clock.nowMs() - ACCESS_TOKEN_TTL_SECONDS * 1000;
    for (const [key, code] of this.codes) if (code.expiresAtMs <= horizonMs) this.codes.delete(key);
  }
}
