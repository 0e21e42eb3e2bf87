import { randomBytes } from 'node:crypto';
import type { SandboxClock } from './clock';
import type { SandboxRequest } from './http/request';

export const ACCESS_TOKEN_TTL_SECONDS = 3600;

export interface AccessToken {
  clientId: string;
  /** Set for authorization-code tokens: whose bank data the token reads. */
  userId?: string;
  /**
   * Set for authorization-code tokens: the consent session (one per code exchange, kept across refreshes). The data
   * API reports it as credentials_id, and a reused authorization code revokes every token of its session.
   */
  sessionId?: string;
  scopes: string[];
  expiresAtMs: number;
}

export type AuthFailure =
  { kind: 'missing'; detail: string } | { kind: 'invalid'; detail: string } | { kind: 'expired'; detail: string } | { kind: 'scope'; detail: string };

/** Issued access tokens. Opaque random strings; expiry runs on sandbox time so tests can age a token in one call. */
export class AccessTokens {
  private readonly tokens = new Map<string, AccessToken>();

  constructor(private readonly clock: SandboxClock) {}

  issue(grant: Omit<AccessToken, 'expiresAtMs'>): { access_token: string; expires_in: number; token_type: 'Bearer'; scope: string } {
    const token = randomBytes(32).toString('base64url');
    this.tokens.set(token, { ...grant, expiresAtMs: this.clock.nowMs() + ACCESS_TOKEN_TTL_SECONDS * 1000 });
    return { access_token: token, expires_in: ACCESS_TOKEN_TTL_SECONDS, token_type: 'Bearer', scope: grant.scopes.join(' ') };
  }

  /** Revokes every token of a user session, e.g. when its refresh token is used (rotation). */
  revokeWhere(predicate: (token: AccessToken) => boolean): void {
    for (const [key, value] of this.tokens) if (predicate(value)) this.tokens.delete(key);
  }

  /**
   * The token a request carries, when it is valid and has every scope in `scopes`.
   * `kind` says whether a user token (authorization code) or an application token (client credentials) is needed.
   */
  authenticate(req: SandboxRequest, scopes: string[], kind: 'user' | 'application'): AccessToken | AuthFailure {
    const header = req.header('authorization');
    if (!header) return { kind: 'missing', detail: 'the Authorization header is missing; send Authorization: Bearer <access token>' };
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) return { kind: 'invalid', detail: 'the Authorization header must be "Bearer <access token>"' };
    const token = this.tokens.get(match[1]!);
    if (!token) return { kind: 'invalid', detail: 'the access token is not valid' };
    if (token.expiresAtMs <= this.clock.nowMs()) return { kind: 'expired', detail: 'the access token has expired' };
    if (kind === 'user' && !token.userId) {
      return { kind: 'scope', detail: 'this endpoint needs an end-user token from the authorization-code grant' };
    }
    if (kind === 'application' && token.userId) {
      return { kind: 'scope', detail: 'this endpoint needs an application token from the client-credentials grant' };
    }
    const missing = scopes.filter((scope) => !token.scopes.includes(scope));
    if (missing.length > 0) return { kind: 'scope', detail: `the access token lacks the scope ${missing.join(' ')}` };
    return token;
  }
}

export function isAuthFailure(value: AccessToken | AuthFailure): value is AuthFailure {
  return 'kind' in value;
}
