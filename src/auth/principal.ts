import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ForbiddenError, UnauthenticatedError } from '../errors';
import { sessionKey, type Session, type SessionStore } from '../store/session.store';

export const SESSION_COOKIE = 'bankgraph_session';

/** Who is asking. `invalid` keeps the reason so the error says what to fix, without failing public fields. */
export type Principal =
  | { kind: 'user'; sessionToken: string; sessionKey: string; userId: string; session: Session }
  | { kind: 'merchant'; keyId: string }
  | { kind: 'anonymous' }
  | { kind: 'invalid'; reason: string };

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

/** Reads `Authorization: Bearer …` (session token or merchant key) or, for browsers, the session cookie. */
export async function resolvePrincipal(
  credentials: { authorization?: string; cookie?: string },
  merchantKeys: MerchantKeys,
  sessions: SessionStore,
): Promise<Principal> {
  let token: string | undefined;
  if (credentials.authorization !== undefined && credentials.authorization !== '') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(credentials.authorization);
    if (!match) return { kind: 'invalid', reason: 'The Authorization header must be "Bearer <session token or merchant key>".' };
    token = match[1]!;
    const keyId = merchantKeys.match(token);
    if (keyId) return { kind: 'merchant', keyId };
  } else {
    token = readCookie(credentials.cookie, SESSION_COOKIE);
    if (token === undefined) return { kind: 'anonymous' };
  }
  const session = await sessions.get(token);
  if (!session) return { kind: 'invalid', reason: 'The session token is unknown or has expired; sign in again at /auth/login.' };
  return { kind: 'user', sessionToken: token, sessionKey: sessionKey(token), userId: session.userId, session };
}

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
  return new UnauthenticatedError(
    principal.kind === 'invalid'
      ? principal.reason
      : 'Sign in first. In a browser: use "Sign in" in the playground, or open /auth/login. From a program: send "Authorization: Bearer <session token>" (from /auth/login?response=json) or a merchant key.',
  );
}

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
  return createHash('sha256').update(value).digest();
}
