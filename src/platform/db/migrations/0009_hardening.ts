import type { Kysely } from 'kysely';

/**
 * Login states are now keyed by the state's hash with the verifier encrypted; rows written before (state and
 * verifier in clear) are dropped, not left for their ten minutes. A sign-in in progress across the upgrade starts again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.deleteFrom('login_states' as never).execute();
}

/** Rows written after the upgrade are unreadable to older code, which would find no state for them. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.deleteFrom('login_states' as never).execute();
}
