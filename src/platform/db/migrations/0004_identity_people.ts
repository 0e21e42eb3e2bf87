import type { Kysely } from 'kysely';

/**
 * What tells two people apart in bank identity (docs/identity.md, "Who a grant belongs to"): the keyed digest of
 * the full name the bank gave for the login (null for connections made before it was asked for, and when the bank
 * gave none), and the connection a newer grant of the same login replaced it with, so only a login's latest view of
 * its accounts recognises the person.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('bank_connections').addColumn('holder_digest', 'text').execute();
  await db.schema.alterTable('bank_connections').addColumn('replaced_by', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('bank_connections').dropColumn('replaced_by').execute();
  await db.schema.alterTable('bank_connections').dropColumn('holder_digest').execute();
}
