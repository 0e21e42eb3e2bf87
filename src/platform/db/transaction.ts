import type { Transaction } from 'kysely';
import { TryAgainError } from '../errors/gateway-errors';
import type { Database } from './database';
import { retryPolicy } from './retry-policy';
import { isSqliteUniqueViolation } from './sqlite.connection';
import type { Tables } from './tables';

/** PostgreSQL's answers to a transaction that lost a race with another: safe to run again from the start. */
const RETRYABLE_POSTGRES_CODES = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 12;

/**
 * "Full jitter" over a window that doubles with each retry (20 ms first) up to a second, so transactions that
 * collided spread out instead of colliding again in lockstep, and a hot spot is given more time the longer it lasts.
 */
const conflictRetry = retryPolicy((error) => RETRYABLE_POSTGRES_CODES.has(codeOf(error) ?? ''), {
  retries: MAX_ATTEMPTS - 1,
  initialDelayMs: 20,
  maxDelayMs: 1_000,
  jitter: 'full',
});

/**
 * Runs `work` as one serializable transaction and retries it when the database reports that it conflicted with a
 * concurrent one, so a check-then-write (a limit, an insert-if-absent) holds across instances without locks held
 * in memory. SQLite write transactions start IMMEDIATE and so never conflict; PostgreSQL runs them SERIALIZABLE.
 * `work` must touch nothing but the database: it may run more than once. A transaction that still conflicts after
 * MAX_ATTEMPTS is TRY_AGAIN for the client (nothing was written), never an internal error.
 */
export async function inTransaction<T>(database: Database, work: (trx: Transaction<Tables>) => Promise<T>): Promise<T> {
  try {
    return await conflictRetry.execute(() => {
      const transaction = database.db.transaction();
      return (database.kind === 'postgres' ? transaction.setIsolationLevel('serializable') : transaction).execute(work);
    });
  } catch (error) {
    if (!RETRYABLE_POSTGRES_CODES.has(codeOf(error) ?? '')) throw error;
    throw new TryAgainError('Too many requests changed the same records at once and this one could not be saved; nothing was changed. Send it again.', 1);
  }
}

/** A unique or primary-key constraint refused the write (pg 23505; SQLite's constraint codes). */
export function isUniqueViolation(error: unknown): boolean {
  return codeOf(error) === '23505' || isSqliteUniqueViolation(error);
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
