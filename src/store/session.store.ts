import { createHash, randomBytes } from 'node:crypto';
import type Keyv from 'keyv';
import { BoundedMap } from './bounded-map';

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
  /**
   * Sessions read in the last second, so a burst of requests costs one store read. Another instance's logout is
   * seen at most this late; this instance's own logout and token updates are seen at once.
   */
  private readonly recent = new BoundedMap<string, { session: Session; untilMs: number }>(10_000);

  constructor(
    private readonly keyv: Keyv<Session>,
    private readonly recentMs = 1_000,
  ) {}

  async create(userId: string, tokens: ProviderTokens, now = Date.now()): Promise<{ sessionToken: string; expiresAt: string }> {
    const sessionToken = randomBytes(32).toString('base64url');
    const expiresAt = new Date(now + SESSION_TTL_MS).toISOString();
    await this.keyv.set(keyOf(sessionToken), { userId, tokens, createdAt: new Date(now).toISOString(), expiresAt }, SESSION_TTL_MS);
    return { sessionToken, expiresAt };
  }

  /** `fresh` skips the one-second memory: token refresh must see what another instance wrote. */
  async get(sessionToken: string, { fresh = false } = {}): Promise<Session | undefined> {
    const key = keyOf(sessionToken);
    const remembered = fresh ? undefined : this.recent.get(key);
    if (remembered && remembered.untilMs > Date.now()) return remembered.session;
    const session = await this.keyv.get(key);
    if (session) this.remember(key, session);
    else this.recent.delete(key);
    return session;
  }

  async updateTokens(sessionToken: string, tokens: ProviderTokens): Promise<void> {
    const session = await this.get(sessionToken, { fresh: true });
    if (!session) return;
    const ttl = Date.parse(session.expiresAt) - Date.now();
    if (ttl <= 0) return;
    const updated = { ...session, tokens };
    await this.keyv.set(keyOf(sessionToken), updated, ttl);
    this.remember(keyOf(sessionToken), updated);
  }

  /** A session by its key (sessionKey), for background work that holds no session token: the reconciler. */
  async getByKey(key: string): Promise<Session | undefined> {
    return this.keyv.get(key);
  }

  async delete(sessionToken: string): Promise<void> {
    this.recent.delete(keyOf(sessionToken));
    await this.keyv.delete(keyOf(sessionToken));
  }

  private remember(key: string, session: Session): void {
    this.recent.set(key, { session, untilMs: Date.now() + this.recentMs });
  }
}

/** A session's identity for logs, locks and cache keys: never the token itself. */
export function sessionKey(sessionToken: string): string {
  return keyOf(sessionToken);
}

function keyOf(sessionToken: string): string {
  return createHash('sha256').update(sessionToken).digest('base64url');
}
