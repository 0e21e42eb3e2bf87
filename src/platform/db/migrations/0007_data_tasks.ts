import type { Kysely } from 'kysely';

/**
 * Data tasks follow their user and bank connection: a user's open and stored tasks are counted at every start
 * (DATA_TASKS_MAX_PER_USER), and a disconnected connection's tasks are deleted; both read by these columns.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('data_task_requests_user_created').on('data_task_requests').columns(['user_id', 'created_at_ms']).execute();
  await db.schema.createIndex('data_task_requests_connection').on('data_task_requests').column('connection_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('data_task_requests_connection').execute();
  await db.schema.dropIndex('data_task_requests_user_created').execute();
}
