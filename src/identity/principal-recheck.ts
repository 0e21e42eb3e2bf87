import type { Database } from '../platform/db/database';
import type { SessionStore } from './session.store';
import type { PrincipalCheck } from '../platform/access/revocation';

/** Users per query (PostgreSQL and SQLite both take this many parameters). */
const BATCH = 500;

/**
 * The store's answer for every open socket's principal at once: which sessions are still live (not expired, idle,
 * logged out, or of a revoked user), and which users signed in without a session (app identity) are revoked or gone.
 * A few queries per period whatever the number of sockets.
 */
export function principalCheck(database: Database, sessions: SessionStore): PrincipalCheck {
  return async ({ sessionKeys, userIds }) => {
    const liveSessions = await sessions.liveKeys(sessionKeys);
    const revokedUsers = new Set(userIds);
    for (let start = 0; start < userIds.length; start += BATCH) {
      const rows = await database.db
        .selectFrom('users')
        .select('id')
        .where('id', 'in', userIds.slice(start, start + BATCH))
        .where('revokedAtMs', 'is', null)
        .execute();
      for (const row of rows) revokedUsers.delete(row.id);
    }
    return { liveSessions, revokedUsers };
  };
}
