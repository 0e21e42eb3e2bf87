import type { IncomingHttpHeaders } from 'node:http';
import { ForbiddenError, UnauthenticatedError } from '../errors/gateway-errors';

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

export type UserPrincipal = Extract<Principal, { kind: 'user' }>;

export interface ResolveOptions {
  use?: boolean;
  audience?: string;
}

/** What a request or a WebSocket carries that may name a principal. */
export interface Credentials {
  authorization?: string;
  cookie?: string;
}

/**
 * Turns credentials into a principal (the identity module's PrincipalResolver): the transports ask it, and never
 * know how sessions, merchant keys or app tokens are checked.
 */
export interface PrincipalSource {
  /**
   * `use: false` checks a session without counting as its use (the periodic check of an open socket); `audience`
   * is the one an app access token must name instead of AUTH_AUDIENCE (MCP_AUDIENCE on /mcp).
   */
  resolve(credentials: Credentials, options?: ResolveOptions): Promise<Principal>;
  /** The session key a session token would have, before it is looked up (undefined: a merchant key, an app token or none). */
  claimedSessionKey(credentials: Credentials): string | undefined;
}

export function credentialsFromHeaders(headers: IncomingHttpHeaders): Credentials {
  return { authorization: headers.authorization, cookie: headers.cookie };
}

export function requireUser(principal: Principal): UserPrincipal {
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

/** `extensions.reason` of the FORBIDDEN that refuses an agent what only a person decides. */
export const AGENT_NOT_ALLOWED_REASON = 'AGENT_NOT_ALLOWED';

/** Approving, declining and refunding are a person's decisions: refused to an agent acting through /mcp, whatever its credential. */
export function requirePerson(agent: { clientName: string } | undefined, action: string): void {
  if (!agent) return;
  throw new ForbiddenError(
    `${action} is decided by a person, never by an agent (this request came through /mcp from "${agent.clientName}"). Use the app or the back office with your own credentials.`,
    { reason: AGENT_NOT_ALLOWED_REASON },
  );
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

/** What an operation's context offers every resolver: who is asking. */
export interface PrincipalContext {
  readonly principal: Principal;
}
