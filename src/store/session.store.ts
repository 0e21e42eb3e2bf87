import { createHash, randomBytes } from 'node:crypto';
import type Keyv from 'keyv';

export interface ProviderTokens {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds when the provider's access token expires. */
  expiresAtMs: number;
}

export interface Session {
  /** Stable across sign-ins of the same bank user (see README: "Who is the user"). */
  userId: string;
  tokens: ProviderTokens;
  createdAt: string;
  expiresAt: string;
}

/** How long a gateway session lasts; the provider tokens inside it are refreshed as often as needed. */
export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;

/**
 * Sessions keyed by a hash of their token, so the store never holds a usable session token
 * (a leaked backup or a shared Redis does not hand out sessions).
 */
export class SessionStore {
  constructor(private readonly keyv: Keyv<Session>) {}

  async create(userId: string, tokens: ProviderTokens, now = Date.now()): Promise<{ sessionToken: string; expiresAt: string }> {
    const sessionToken = randomBytes(32).toString('base64url');
    const expiresAt = new Date(now + SESSION_TTL_MS).toISOString();
    await this.keyv.set(keyOf(sessionToken), { userId, tokens, createdAt: new Date(now).toISOString(), expiresAt }, SESSION_TTL_MS);
    return { sessionToken, expiresAt };
  }

  async get(sessionToken: string): Promise<Session | undefined> {
    return this.keyv.get(keyOf(sessionToken));
  }

  async updateTokens(sessionToken: string, tokens: ProviderTokens): Promise<void> {
    const session = await this.get(sessionToken);
    if (!session) return;
    const ttl = Date.parse(session.expiresAt) - Date.now();
    if (ttl > 0) await this.keyv.set(keyOf(sessionToken), { ...session, tokens }, ttl);
  }

  async delete(sessionToken: string): Promise<void> {
    await this.keyv.delete(keyOf(sessionToken));
  }
}

/** A session's identity for logs, locks and cache keys: never the token itself. */
export function sessionKey(sessionToken: string): string {
  return keyOf(sessionToken);
}

function keyOf(sessionToken: string): string {
  return createHash('sha256').update(sessionToken).digest('base64url');
}
