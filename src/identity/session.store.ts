import { hash, randomBytes } from 'node:crypto';
import type { LRUCache } from 'lru-cache';
import { growingLru } from '../platform/store/growing-lru';
import type { Database } from '../platform/db/database';

export interface Session {
  /** The durable user (users table). */
  userId: string;
  expiresAtMs: number;
  /** When it was last used, as the store knows it: refreshed at most every `touchEveryMs`. */
  lastUsedAtMs: number;
}

/** How long a gateway session lasts; the provider tokens of the user's connections are refreshed as often as needed. */
export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;

/**
 * Every session token starts with this, so an unknown bearer token can be told apart: a session that ended, or a
 * merchant key this instance does not know. Sessions made before the prefix stay valid until they end.
 */
export const SESSION_TOKEN_PREFIX = 'bgs_';

/** SESSION_IDLE_TIMEOUT's default. */
export const SESSION_IDLE_TIMEOUT_MS = 12 * 3600 * 1000;

/** The longest a session's "last used" lags behind its use, so a busy session costs one write a minute at most. */
const MAX_TOUCH_INTERVAL_MS = 60_000;

/** Keys per query when many sessions are checked at once (PostgreSQL and SQLite both take this many parameters). */
const CHECK_BATCH = 500;

export interface SessionStoreOptions {
  /** A session not used for this long ends (SESSION_IDLE_TIMEOUT). */
  idleTimeoutMs?: number;
  now?: () => number;
}

/**
 * Gateway sessions in the relational store, keyed by a hash of their token, so the store never holds a usable
 * session token (a leaked backup does not hand out sessions). A revoked user's sessions are not found, and neither
 * is a session past its lifetime or unused for longer than the idle timeout.
 */
export class SessionStore {
  /**
   * Sessions read in the last second, so a burst of requests costs one store read. A logout anywhere is also
   * announced on the event bus (src/identity/identity-events.ts), which calls forget() on every instance.
   */
  private readonly recent: LRUCache<string, Session> | undefined;
  /**
   * Counts forgets: a read that started before one may have found what was just revoked, so it is not kept for the
   * next reads (it would otherwise answer for a second after the revocation).
   */
  private generation = 0;
  readonly idleTimeoutMs: number;
  /** Using a session refreshes its "last used" only when this much older: no write per request. */
  readonly touchEveryMs: number;
  private readonly now: () => number;

  constructor(
    private readonly database: Database,
    recentMs = 1_000,
    options: SessionStoreOptions = {},
  ) {
    this.idleTimeoutMs = options.idleTimeoutMs ?? SESSION_IDLE_TIMEOUT_MS;
    this.touchEveryMs = Math.min(MAX_TOUCH_INTERVAL_MS, Math.ceil(this.idleTimeoutMs / 10));
    this.now = options.now ?? Date.now;
    // lru-cache reads a ttl of 0 as no expiry; here it means remember nothing. ttlResolution 0: read the clock each time.
    this.recent = recentMs > 0 ? growingLru(10_000, { ttl: recentMs, ttlResolution: 0, perf: { now: this.now } }) : undefined;
  }

  async create(userId: string, now = this.now()): Promise<{ sessionToken: string; expiresAt: string }> {
    const sessionToken = SESSION_TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const expiresAtMs = now + SESSION_TTL_MS;
    // Ended sessions go here, so the table holds only live ones (plus at most one sign-in's worth).
    await this.database.db
      .deleteFrom('sessions')
      .where((eb) => eb.or([eb('expiresAtMs', '<=', now), eb('lastUsedAtMs', '<=', now - this.idleTimeoutMs)]))
      .execute();
    await this.database.db
      .insertInto('sessions')
      .values({ key: sessionKey(sessionToken), userId, createdAtMs: now, expiresAtMs, lastUsedAtMs: now })
      .execute();
    return { sessionToken, expiresAt: new Date(expiresAtMs).toISOString() };
  }

  /**
   * The live session of this token, if any. A use (the default) refreshes its "last used", at most once per
   * touchEveryMs; a check on behalf of an open socket (`use: false`) does not, so an idle socket cannot keep it alive.
   */
  async get(sessionToken: string, options: { use?: boolean } = {}): Promise<Session | undefined> {
    const key = sessionKey(sessionToken);
    const now = this.now();
    let session = this.recent?.get(key);
    if (!session) {
      const generation = this.generation;
      const row = await this.database.db
        .selectFrom('sessions as s')
        .innerJoin('users as u', 'u.id', 's.userId')
        .select(['s.userId', 's.expiresAtMs', 's.lastUsedAtMs'])
        .where('s.key', '=', key)
        .where('s.expiresAtMs', '>', now)
        .where('s.lastUsedAtMs', '>', now - this.idleTimeoutMs)
        .where('u.revokedAtMs', 'is', null)
        .executeTakeFirst();
      if (!row) {
        this.recent?.delete(key);
        return undefined;
      }
      session = { userId: row.userId, expiresAtMs: Number(row.expiresAtMs), lastUsedAtMs: Number(row.lastUsedAtMs) };
      if (generation === this.generation) this.recent?.set(key, session);
    }
    if (!this.live(session, now)) return undefined;
    if (options.use !== false && now - session.lastUsedAtMs >= this.touchEveryMs) {
      session.lastUsedAtMs = now;
      await this.database.db.updateTable('sessions').set({ lastUsedAtMs: now }).where('key', '=', key).where('lastUsedAtMs', '<', now).execute();
    }
    return session;
  }

  /** Which of these sessions (by key) are still live, read from the store: for the periodic check of open sockets. */
  async liveKeys(keys: readonly string[]): Promise<Set<string>> {
    const live = new Set<string>();
    const now = this.now();
    for (let start = 0; start < keys.length; start += CHECK_BATCH) {
      const rows = await this.database.db
        .selectFrom('sessions as s')
        .innerJoin('users as u', 'u.id', 's.userId')
        .select('s.key')
        .where('s.key', 'in', keys.slice(start, start + CHECK_BATCH))
        .where('s.expiresAtMs', '>', now)
        .where('s.lastUsedAtMs', '>', now - this.idleTimeoutMs)
        .where('u.revokedAtMs', 'is', null)
        .execute();
      for (const row of rows) live.add(row.key);
    }
    return live;
  }

  /** Ends a session; answers whose it was, so its sockets can be closed. */
  async delete(sessionToken: string): Promise<Omit<Session, 'lastUsedAtMs'> | undefined> {
    const key = sessionKey(sessionToken);
    this.generation += 1;
    this.recent?.delete(key);
    return this.database.db.deleteFrom('sessions').where('key', '=', key).returning(['userId', 'expiresAtMs']).executeTakeFirst();
  }

  /** Drops what this instance remembers of a session (or of all of a user's sessions) after a revocation. */
  forget(match: { sessionKey?: string; userId?: string }): void {
    this.generation += 1;
    if (match.sessionKey) this.recent?.delete(match.sessionKey);
    if (match.userId && this.recent) {
      const recent = this.recent;
      const ended = [...recent.entries()].filter(([, session]) => session.userId === match.userId);
      for (const [key] of ended) recent.delete(key);
    }
  }

  private live(session: Session, now: number): boolean {
    return session.expiresAtMs > now && session.lastUsedAtMs > now - this.idleTimeoutMs;
  }
}

/** A session's identity for logs, locks, logouts and rate limits: never the token itself. */
export function sessionKey(sessionToken: string): string {
  return hash('sha256', sessionToken, 'base64url');
}
