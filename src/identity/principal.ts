import { hash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ForbiddenError, UnauthenticatedError } from '../platform/errors/gateway-errors';
import type { AppTokenVerifier } from './app-token.verifier';
import type { ConnectionStore } from './connection.store';
import type { RecentRevocations } from './recent-revocations';
import { SESSION_TOKEN_PREFIX, sessionKey, type SessionStore } from './session.store';

export const SESSION_COOKIE = 'bankgraph_session';

/**
 * Who is asking. A user is the durable user (users table), reached through a gateway session (bank identity,
 * `sessionKey` set) or the app's own access token (app identity). `invalid` keeps the reason so the error says
 * what to fix, without failing public fields.
 */
export type Principal =
  /** expiresAtMs: when the credential stops being valid (an app access token's exp, a session's lifetime); a socket opened with it closes then. */
  | { kind: 'user'; userId: string; sessionKey?: string; expiresAtMs?: number }
  | { kind: 'merchant'; keyId: string }
  /** appIdentity: no credentials where only the app's access token signs a user in, so the error says that. */
  | { kind: 'anonymous'; appIdentity?: true }
  /** revoked: the credential was valid until a revocation heard while it was looked up; a socket opened with it closes. */
  | { kind: 'invalid'; reason: string; revoked?: true };

export class MerchantKeys {
  private readonly digests: { id: string; digest: Buffer }[];

  constructor(keys: readonly string[]) {
    // Compared as digests with timingSafeEqual, so neither the length nor the content of a key leaks through timing.
    this.digests = keys.map((key, index) => ({ id: `merchant-${index + 1}`, digest: digest(key) }));
  }

  match(candidate: string): string | undefined {
    const candidateDigest = digest(candidate);
    let found: string | undefined;
    for (const { id, digest: known } of this.digests) if (timingSafeEqual(known, candidateDigest)) found = id;
    return found;
  }
}

/**
 * Reads `Authorization: Bearer …` (merchant key, then the app's JWT in app identity or a session token in bank
 * identity) or, for browsers in bank identity, the session cookie. The two identities never mix: with an IdP
 * configured, gateway sessions are not accepted, so a bank sign-in cannot stand in for the app's own login.
 */
export class PrincipalResolver {
  constructor(
    private readonly merchantKeys: MerchantKeys,
    private readonly sessions: SessionStore,
    private readonly connections: ConnectionStore,
    private readonly appTokens: AppTokenVerifier | undefined,
    private readonly revocations: RecentRevocations,
  ) {}

  get appIdentity(): boolean {
    return this.appTokens !== undefined;
  }

  /**
   * Who the credentials name. A user whose session or self was revoked while the lookup ran is not trusted: the
   * store may have answered before the revocation was written (src/identity/recent-revocations.ts). `use: false`
   * checks a session without counting as its use (the periodic check of an open socket).
   */
  async resolve(credentials: { authorization?: string; cookie?: string }, options: { use?: boolean } = {}): Promise<Principal> {
    const lookup = this.revocations.begin();
    try {
      const principal = await this.lookUp(credentials, options);
      if (principal.kind === 'user' && this.revocations.revokedSince(principal, lookup)) {
        return { kind: 'invalid', reason: principal.sessionKey ? ENDED_SESSION : REVOKED_USER, revoked: true };
      }
      return principal;
    } finally {
      this.revocations.end(lookup);
    }
  }

  /** The session key a session token would have, before it is looked up (undefined: a merchant key, an app token or none). */
  claimedSessionKey(credentials: { authorization?: string; cookie?: string }): string | undefined {
    if (this.appTokens) return undefined;
    const bearer = credentials.authorization ? /^Bearer\s+(\S+)\s*$/i.exec(credentials.authorization)?.[1] : undefined;
    const token = credentials.authorization ? bearer : readCookie(credentials.cookie, SESSION_COOKIE);
    return token === undefined || this.merchantKeys.match(token) ? undefined : sessionKey(token);
  }

  private async lookUp(credentials: { authorization?: string; cookie?: string }, options: { use?: boolean }): Promise<Principal> {
    let token: string | undefined;
    if (credentials.authorization !== undefined && credentials.authorization !== '') {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(credentials.authorization);
      if (!match)
        return { kind: 'invalid', reason: `The Authorization header must be "Bearer <${this.appTokens ? 'access token' : 'session token'} or merchant key>".` };
      token = match[1]!;
      const keyId = this.merchantKeys.match(token);
      if (keyId) return { kind: 'merchant', keyId };
    } else if (!this.appTokens) {
      token = readCookie(credentials.cookie, SESSION_COOKIE);
    }
    if (token === undefined) return this.appTokens ? { kind: 'anonymous', appIdentity: true } : { kind: 'anonymous' };
    const bearer = credentials.authorization !== undefined && credentials.authorization !== '';
    if (this.appTokens) {
      if (!JWT_SHAPE.test(token)) return { kind: 'invalid', reason: UNKNOWN_KEY_OR_TOKEN_APP };
      const verified = await this.appTokens.verify(token);
      if (!verified.ok) return { kind: 'invalid', reason: verified.reason };
      const user = await this.connections.appUser(verified.issuer, verified.subject);
      if (user.revoked) return { kind: 'invalid', reason: REVOKED_USER };
      return { kind: 'user', userId: user.userId, expiresAtMs: verified.expiresAtMs };
    }
    const session = await this.sessions.get(token, options);
    if (!session) {
      const sessionLike = !bearer || token.startsWith(SESSION_TOKEN_PREFIX);
      return { kind: 'invalid', reason: sessionLike ? 'The session token is unknown or has expired; sign in again at /auth/login.' : UNKNOWN_KEY_OR_SESSION };
    }
    return { kind: 'user', userId: session.userId, sessionKey: sessionKey(token), expiresAtMs: session.expiresAtMs };
  }
}

const REVOKED_USER = 'This user has been revoked.';
/** Three base64url segments: anything else sent with app identity cannot be an access token. */
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;
const SAME_KEYS = 'A merchant key must be one of MERCHANT_KEYS, the same list on every instance of the gateway';
const UNKNOWN_KEY_OR_SESSION = `The bearer token is not a merchant key of this gateway, nor a session token it issued (those start with ${SESSION_TOKEN_PREFIX}). ${SAME_KEYS}; a session comes from /auth/login.`;
const UNKNOWN_KEY_OR_TOKEN_APP = `The bearer token is not a merchant key of this gateway, nor an access token (a signed JWT). ${SAME_KEYS}; a user sends the access token of your identity provider.`;
const ENDED_SESSION = 'This session has ended (logged out or revoked); sign in again at /auth/login.';

export function credentialsFromHeaders(headers: IncomingHttpHeaders): { authorization?: string; cookie?: string } {
  return { authorization: headers.authorization, cookie: headers.cookie };
}

export function requireUser(principal: Principal): Extract<Principal, { kind: 'user' }> {
  if (principal.kind === 'user') return principal;
  if (principal.kind === 'merchant') throw new ForbiddenError('This field needs an end-user session; a merchant key cannot act as a bank user.');
  throw unauthenticated(principal);
}

export function requireMerchant(principal: Principal): Extract<Principal, { kind: 'merchant' }> {
  if (principal.kind === 'merchant') return principal;
  if (principal.kind === 'user') throw new ForbiddenError('This operation needs a merchant key; an end-user session cannot use it.');
  throw unauthenticated(principal);
}

export function requireAnyPrincipal(principal: Principal): Exclude<Principal, { kind: 'anonymous' | 'invalid' }> {
  if (principal.kind === 'user' || principal.kind === 'merchant') return principal;
  throw unauthenticated(principal);
}

function unauthenticated(principal: Extract<Principal, { kind: 'anonymous' | 'invalid' }>): UnauthenticatedError {
  if (principal.kind === 'invalid') return new UnauthenticatedError(principal.reason);
  return new UnauthenticatedError(principal.appIdentity ? SEND_ACCESS_TOKEN : SIGN_IN_FIRST);
}

const SIGN_IN_FIRST =
  'Sign in first. In a browser: use "Sign in" in the playground, or open /auth/login. From a program: send "Authorization: Bearer <session token>" (from /auth/login?response=json) or a merchant key.';
/** App identity has no sign-in of its own to offer: the app signs its users in and the gateway checks its tokens. */
const SEND_ACCESS_TOKEN =
  'Send your app\'s access token: "Authorization: Bearer <access token>" (WebSocket: connectionParams.authorization; in the playground, the "Access token" field), or a merchant key. This gateway uses app identity, so it has no sign-in of its own.';

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return decodeCookieValue(part.slice(index + 1).trim());
  }
  return undefined;
}

/** A value that is not valid percent-encoding (`%`, `%zz`) is kept as sent: it is then simply an unknown session. */
function decodeCookieValue(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

function digest(value: string): Buffer {
  // The one-shot hash: half the cost of a Hash object, and every WebSocket and request with a key pays it.
  return hash('sha256', value, 'buffer');
}
