import { sql, type Kysely } from 'kysely';

/**
 * Refund attempts whose outcome is unknown are kept until they are settled (src/refunds/refund-outcome.ts):
 * - `answered`: 1 once a client has been given the attempt's refund. Until then the row does not expire, so a
 *   retry at any later time finds the attempt (and the refund the provider made for it) instead of sending again;
 * - `sent_at_ms`: the last time the attempt was sent to the provider, so the reconciler leaves alone an attempt a
 *   request is sending right now;
 * - a refund id is recorded under one key at most: matching a provider refund to an attempt can never give the
 *   same refund to two attempts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('refund_keys')
    .addColumn('answered', 'integer', (column) => column.notNull().defaultTo(1))
    .execute();
  await db.schema
    .alterTable('refund_keys')
    .addColumn('sent_at_ms', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
  await sql`update refund_keys set sent_at_ms = created_at_ms, answered = case when refund_id is null then 0 else 1 end`.execute(db);
  await db.schema.createIndex('refund_keys_refund_id').unique().on('refund_keys').column('refund_id').execute();
  await db.schema.createIndex('refund_keys_payment').on('refund_keys').column('payment_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('refund_keys_payment').execute();
  await db.schema.dropIndex('refund_keys_refund_id').execute();
  await db.schema.alterTable('refund_keys').dropColumn('sent_at_ms').execute();
  await db.schema.alterTable('refund_keys').dropColumn('answered').execute();
}
