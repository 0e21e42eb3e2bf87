import { hash, timingSafeEqual } from 'node:crypto';
import type { Credentials, Principal, PrincipalSource, ResolveOptions } from '../platform/access/principal';
import type { RecentRevocations } from '../platform/access/recent-revocations';
import { readCookie, SESSION_COOKIE } from '../platform/access/session-cookie';
import type { AppTokenVerifier } from './app-token.verifier';
import type { ConnectionStore } from './connection.store';
import { SESSION_TOKEN_PREFIX, sessionKey, type SessionStore } from './session.store';

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

export interface PrincipalResolverDeps {
  merchantKeys: MerchantKeys;
  sessions: SessionStore;
  connections: ConnectionStore;
  /** The app's token verifier in app identity; undefined in bank identity. */
  appTokens: AppTokenVerifier | undefined;
  revocations: RecentRevocations;
}

/**
 * Reads `Authorization: Bearer …` (merchant key, then the app's JWT in app identity or a session token in bank
 * identity) or, for browsers in bank identity, the session cookie. The two identities never mix: with an IdP
 * configured, gateway sessions are not accepted, so a bank sign-in cannot stand in for the app's own login.
 */
export class PrincipalResolver implements PrincipalSource {
  private readonly merchantKeys: MerchantKeys;
  private readonly sessions: SessionStore;
  private readonly connections: ConnectionStore;
  private readonly appTokens: AppTokenVerifier | undefined;
  private readonly revocations: RecentRevocations;

  constructor(deps: PrincipalResolverDeps) {
    this.merchantKeys = deps.merchantKeys;
    this.sessions = deps.sessions;
    this.connections = deps.connections;
    this.appTokens = deps.appTokens;
    this.revocations = deps.revocations;
  }

  get appIdentity(): boolean {
    return this.appTokens !== undefined;
  }

  /**
   * Who the credentials name. A user whose session or self was revoked while the lookup ran is not trusted: the
   * store may have answered before the revocation was written (src/platform/access/recent-revocations.ts). `use: false`
   * checks a session without counting as its use (the periodic check of an open socket).
   */
  async resolve(credentials: Credentials, options: ResolveOptions = {}): Promise<Principal> {
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
  claimedSessionKey(credentials: Credentials): string | undefined {
    if (this.appTokens) return undefined;
    const bearer = credentials.authorization ? /^Bearer\s+(\S+)\s*$/i.exec(credentials.authorization)?.[1] : undefined;
    const token = credentials.authorization ? bearer : readCookie(credentials.cookie, SESSION_COOKIE);
    return token === undefined || this.merchantKeys.match(token) ? undefined : sessionKey(token);
  }

  private async lookUp(credentials: Credentials, options: ResolveOptions): Promise<Principal> {
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
      const verified = await this.appTokens.verify(token, options.audience);
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

function digest(value: string): Buffer {
  // The one-shot hash: half the cost of a Hash object, and every WebSocket and request with a key pays it.
  return hash('sha256', value, 'buffer');
}
