import type { Kysely } from 'kysely';

/**
 * A payout an agent proposed through /mcp names the agent (the MCP client's name) in the ledger, so whoever
 * approves it, and support later, can see that a person did not ask for it directly. Null: the principal itself.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('payouts').addColumn('agent_client', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('payouts').dropColumn('agent_client').execute();
}
