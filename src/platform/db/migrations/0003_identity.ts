import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('issuer', 'text')
    .addColumn('subject', 'text')
    .addColumn('created_at_ms', 'bigint', (column) => column.notNull())
    .addColumn('revoked_at_ms', 'bigint')
    // An app user is (iss, sub): two rows for one pair would split one person's money.
    .addUniqueConstraint('users_issuer_subject', ['issuer', 'subject'])
    .addCheckConstraint('users_issuer_with_subject', sql`(issuer is null) = (subject is null)`)
    .execute();
  await db.schema
    .createTable('bank_connections')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id'))
    .addColumn('provider_id', 'text', (column) => column.notNull())
    .addColumn('scopes', 'text', (column) => column.notNull())
    .addColumn('refresh_token_enc', 'text', (column) => column.notNull())
    .addColumn('access_token_enc', 'text', (column) => column.notNull())
    .addColumn('access_expires_at_ms', 'bigint', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull().check(sql`status in ('active', 'expired', 'revoked')`))
    .addColumn('created_at_ms', 'bigint', (column) => column.notNull())
    .addColumn('refreshed_at_ms', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('bank_connections_user').on('bank_connections').columns(['user_id', 'status']).execute();
  await db.schema
    .createTable('connection_resources')
    .addColumn('connection_id', 'text', (column) => column.notNull().references('bank_connections.id'))
    .addColumn('kind', 'text', (column) => column.notNull().check(sql`kind in ('account', 'card')`))
    .addColumn('provider_id', 'text', (column) => column.notNull())
    .addColumn('resource_id', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('connection_resources_pk', ['connection_id', 'kind', 'provider_id', 'resource_id'])
    .execute();
  await db.schema.createIndex('connection_resources_seen').on('connection_resources').columns(['provider_id', 'kind', 'resource_id']).execute();
  await db.schema
    .createTable('sessions')
    .addColumn('key', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id'))
    .addColumn('created_at_ms', 'bigint', (column) => column.notNull())
    .addColumn('expires_at_ms', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();
  // Data tasks (0002_money) were fetched with the starting session's token; now with the connection's.
  await db.schema.alterTable('data_task_requests').addColumn('connection_id', 'text').execute();
  await db.schema.alterTable('data_task_requests').dropColumn('session_key').execute();
  await db.schema
    .createTable('login_states')
    .addColumn('state', 'text', (column) => column.primaryKey())
    .addColumn('binding_hash', 'text', (column) => column.notNull())
    .addColumn('code_verifier', 'text', (column) => column.notNull())
    .addColumn('return_to', 'text')
    .addColumn('response_mode', 'text', (column) => column.notNull().check(sql`response_mode in ('cookie', 'json')`))
    .addColumn('user_id', 'text', (column) => column.references('users.id'))
    .addColumn('expires_at_ms', 'bigint', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('data_task_requests').addColumn('session_key', 'text').execute();
  await db.schema.alterTable('data_task_requests').dropColumn('connection_id').execute();
  for (const table of ['login_states', 'sessions', 'connection_resources', 'bank_connections', 'users']) await db.schema.dropTable(table).execute();
}
