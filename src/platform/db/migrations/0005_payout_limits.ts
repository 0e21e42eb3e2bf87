import { sql, type Kysely } from 'kysely';

/** Rows backfilled per statement: bounded, so a large payouts table is upgraded without one huge statement. */
const BACKFILL_BATCH = 500;

/**
 * The payout policy's cap per beneficiary IBAN across users (src/payouts/payout-policy.ts) sums payouts by IBAN,
 * so the IBAN gets a column of its own, copied from the recorded request. Both 24-hour windows count from when a
 * payout became sendable (queued_at_ms: recorded, or approved), so each sum gets an index on that column.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('payouts')
    .addColumn('beneficiary_iban', 'text', (column) => column.notNull().defaultTo(''))
    .execute();
  // The JSON functions differ between SQLite and PostgreSQL; the request is read here instead, a batch at a time.
  for (;;) {
    // Aliases that read the same in snake and camel case: the gateway's Kysely renames result columns.
    const { rows } = await sql<{ id: string; body: string }>`
      select transaction_id as id, request as body from payouts where beneficiary_iban = '' limit ${BACKFILL_BATCH}
    `.execute(db);
    if (rows.length === 0) break;
    for (const row of rows) {
      const iban = (JSON.parse(row.body) as { beneficiary_iban?: unknown }).beneficiary_iban;
      // A request without one (never written by the gateway) gets a value no IBAN has, so the loop ends.
      await sql`update payouts set beneficiary_iban = ${typeof iban === 'string' && iban !== '' ? iban : '?'} where transaction_id = ${row.id}`.execute(db);
    }
  }
  await db.schema.createIndex('payouts_iban_queued').on('payouts').columns(['beneficiary_iban', 'queued_at_ms']).execute();
  await db.schema.createIndex('payouts_owner_queued').on('payouts').columns(['owner', 'queued_at_ms']).execute();
}
