import { sql, type Kysely } from 'kysely';

/**
 * Payouts and verified beneficiaries (src/payouts/), async data tasks (src/data-tasks/), refund idempotency keys
 * (src/refunds/) and the webhook inbox (src/webhooks/). The constraints carry the guarantees the workflow relies on
 * across instances: one payout per transaction id, one live fingerprint per identical request, one verification
 * per user and IBAN.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('payouts')
    .addColumn('transaction_id', 'text', (column) => column.primaryKey())
    .addColumn('owner', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('currency', 'text', (column) => column.notNull())
    .addColumn('amount_in_minor', 'bigint', (column) => column.notNull().check(sql`amount_in_minor > 0`))
    .addColumn('request', 'text', (column) => column.notNull())
    .addColumn('withdrawal', 'text')
    .addColumn('last_error', 'text')
    .addColumn('decline_reason', 'text')
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until_ms', 'bigint')
    .addColumn('queued_at_ms', 'bigint', (column) => column.notNull())
    .addColumn('created_at_ms', 'bigint', (column) => column.notNull())
    .addColumn('updated_at_ms', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('payouts_owner_created').on('payouts').columns(['owner', 'created_at_ms']).execute();
  await db.schema.createIndex('payouts_status').on('payouts').column('status').execute();

  await db.schema
    .createTable('payout_fingerprints')
    .addColumn('fingerprint', 'text', (column) => column.primaryKey())
    .addColumn('transaction_id', 'text', (column) => column.notNull().references('payouts.transaction_id').onDelete('cascade'))
    .addColumn('expires_at_ms', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('beneficiaries')
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('iban', 'text', (column) => column.notNull())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('verified_at_ms', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('beneficiaries_pk', ['user_id', 'iban'])
    .execute();
  await db.schema.createIndex('beneficiaries_iban').on('beneficiaries').column('iban').execute();

  await db.schema
    .createTable('data_task_requests')
    .addColumn('token_hash', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('session_key', 'text')
    .addColumn('resource', 'text', (column) => column.notNull())
    .addColumn('request', 'text', (column) => column.notNull())
    .addColumn('task_id', 'text')
    .addColumn('created_at_ms', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('data_tasks')
    .addColumn('task_id', 'text', (column) => column.primaryKey())
    .addColumn('token_hash', 'text', (column) => column.notNull().references('data_task_requests.token_hash').onDelete('cascade'))
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('provider_status', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('results', 'text')
    .addColumn('completed_at_ms', 'bigint')
    .addColumn('created_at_ms', 'bigint', (column) => column.notNull())
    .addColumn('updated_at_ms', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('data_tasks_status_created').on('data_tasks').columns(['status', 'created_at_ms']).execute();

  await db.schema
    .createTable('refund_keys')
    .addColumn('idempotency_key', 'text', (column) => column.primaryKey())
    .addColumn('fingerprint', 'text', (column) => column.notNull())
    .addColumn('payment_id', 'text', (column) => column.notNull())
    .addColumn('request', 'text', (column) => column.notNull())
    .addColumn('generated', 'integer', (column) => column.notNull())
    .addColumn('refund_id', 'text')
    .addColumn('created_at_ms', 'bigint', (column) => column.notNull())
    .addColumn('expires_at_ms', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('refund_generated_keys')
    .addColumn('fingerprint', 'text', (column) => column.primaryKey())
    .addColumn('idempotency_key', 'text', (column) => column.notNull())
    .addColumn('expires_at_ms', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('webhook_events')
    .addColumn('source', 'text', (column) => column.notNull())
    .addColumn('event_id', 'text', (column) => column.notNull())
    .addColumn('type', 'text', (column) => column.notNull())
    .addColumn('body', 'text', (column) => column.notNull())
    .addColumn('received_at_ms', 'bigint', (column) => column.notNull())
    .addColumn('expires_at_ms', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('webhook_events_pk', ['source', 'event_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_events').execute();
  await db.schema.dropTable('refund_generated_keys').execute();
  await db.schema.dropTable('refund_keys').execute();
  await db.schema.dropTable('data_tasks').execute();
  await db.schema.dropTable('data_task_requests').execute();
  await db.schema.dropTable('beneficiaries').execute();
  await db.schema.dropTable('payout_fingerprints').execute();
  await db.schema.dropTable('payouts').execute();
}
