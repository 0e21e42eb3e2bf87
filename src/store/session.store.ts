import { hash, randomBytes } from 'node:crypto';
import type { Database } from '../db/database';
import { RecentMap } from './recent-map';

export interface Session {
  /** The durable user (users table). */
  userId: string;
  expiresAtMs: number;
}

/** How long a gateway session lasts; the provider tokens of the user's connections are refreshed as often as needed. */
export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;

/**
 * Gateway sessions in the relational store, keyed by a hash of their token, so the store never holds a usable
 * session token (a leaked backup does not hand out sessions). A revoked user's sessions are not found.
 */
export class SessionStore {
  /**
   * Sessions read in the last second, so a burst of requests costs one store read. A logout anywhere is also
   * announced on the event bus (src/identity/identity-events.ts), which calls forget() on every instance.
   */
  private readonly recent: RecentMap<string, Session>;

  constructor(
    private readonly database: Database,
    recentMs = 1_000,
  ) {
    this.recent = new RecentMap(10_000, recentMs);
  }

  async create(userId: string, now = Date.now()): Promise<{ sessionToken: string; expiresAt: string }> {
    const sessionToken = randomBytes(32).toString('base64url');
    const expiresAtMs = now + SESSION_TTL_MS;
    // Expired sessions go here, so the table holds only live ones (plus at most one sign-in's worth).
    await this.database.db.deleteFrom('sessions').where('expiresAtMs', '<=', now).execute();
    await this.database.db
      .insertInto('sessions')
      .values({ key: sessionKey(sessionToken), userId, createdAtMs: now, expiresAtMs })
      .execute();
    return { sessionToken, expiresAt: new Date(expiresAtMs).toISOString() };
  }

  async get(sessionToken: string): Promise<Session | undefined> {
    const key = sessionKey(sessionToken);
    const now = Date.now();
    const remembered = this.recent.get(key);
    if (remembered) return remembered;
    const row = await this.database.db
      .selectFrom('sessions as s')
      .innerJoin('users as u', 'u.id', 's.userId')
      .select(['s.userId', 's.expiresAtMs'])
      .where('s.key', '=', key)
      .where('s.expiresAtMs', '>', now)
      .where('u.revokedAtMs', 'is', null)
      .executeTakeFirst();
    if (!row) {
      this.recent.delete(key);
      return undefined;
    }
    this.recent.set(key, row);
    return row;
  }

  /** Ends a session; answers whose it was, so its sockets can be closed. */
  async delete(sessionToken: string): Promise<Session | undefined> {
    const key = sessionKey(sessionToken);
    this.recent.delete(key);
    return this.database.db.deleteFrom('sessions').where('key', '=', key).returning(['userId', 'expiresAtMs']).executeTakeFirst();
  }

  /** Drops what this instance remembers of a session (or of all of a user's sessions) after a revocation. */
  forget(match: { sessionKey?: string; userId?: string }): void {
    if (match.sessionKey) this.recent.delete(match.sessionKey);
    if (match.userId) this.recent.deleteWhere((session) => session.userId === match.userId);
  }
}

/** A session's identity for logs, locks, logouts and rate limits: never the token itself. */
export function sessionKey(sessionToken: string): string {
  return hash('sha256', sessionToken, 'base64url');
}
