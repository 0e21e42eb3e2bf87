import { sql, type Kysely } from 'kysely';

/** Sessions end after SESSION_IDLE_TIMEOUT without use: when each was last used (refreshed at most every so often). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('sessions')
    .addColumn('last_used_at_ms', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
  // Sessions from before the idle timeout count as used when they were created, so none ends at the upgrade.
  await sql`update sessions set last_used_at_ms = created_at_ms`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('last_used_at_ms').execute();
}
