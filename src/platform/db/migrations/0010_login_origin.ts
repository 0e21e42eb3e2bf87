import type { Kysely } from 'kysely';

/**
 * A sign-in remembers the exact redirect_uri it sent the bank (the code exchange must repeat it, and outside
 * production it follows the loopback name the browser used) and the origin it was started at (so a callback that
 * comes back to another address can say so). Rows written before have neither: they finish on PUBLIC_URL, as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('login_states').addColumn('redirect_uri', 'text').execute();
  await db.schema.alterTable('login_states').addColumn('started_at', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('login_states').dropColumn('started_at').execute();
  await db.schema.alterTable('login_states').dropColumn('redirect_uri').execute();
}
