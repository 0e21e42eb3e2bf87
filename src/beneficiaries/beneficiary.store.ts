import type { Kysely } from 'kysely';
import type { Database } from '../platform/db/database';
import type { Tables } from '../platform/db/tables';

/** An IBAN a user proved is theirs: the bank reported it with a holder whose name matched (verifyAccountHolder). */
export interface VerifiedBeneficiaryRecord {
  /** Electronic format: no spaces, upper case. */
  iban: string;
  /** The holder's name as the bank reported it, not as the user typed it. */
  name: string;
  verifiedAt: string;
}

/** One user's verification of an IBAN, as a merchant key's payout is checked against. */
export interface IbanHolderRecord {
  userId: string;
  name: string;
  verifiedAt: string;
}

/** Verified beneficiaries in the relational store: one row per user and IBAN, so every instance sees each one. */
export class BeneficiaryLedger {
  constructor(private readonly database: Database) {}

  /** Adds or refreshes each entry; a re-verification replaces the name and time. */
  async recordVerified(userId: string, entries: readonly VerifiedBeneficiaryRecord[]): Promise<void> {
    if (entries.length === 0) return;
    await this.database.db
      .insertInto('beneficiaries')
      .values(entries.map((entry) => ({ userId, iban: entry.iban, name: entry.name, verifiedAtMs: Date.parse(entry.verifiedAt) })))
      .onConflict((conflict) =>
        conflict.columns(['userId', 'iban']).doUpdateSet((eb) => ({ name: eb.ref('excluded.name'), verifiedAtMs: eb.ref('excluded.verifiedAtMs') })),
      )
      .execute();
  }

  /** The user's verified IBANs, newest verification first. */
  async listForUser(userId: string): Promise<VerifiedBeneficiaryRecord[]> {
    const rows = await this.database.db
      .selectFrom('beneficiaries')
      .select(['iban', 'name', 'verifiedAtMs'])
      .where('userId', '=', userId)
      .orderBy('verifiedAtMs', 'desc')
      .orderBy('iban')
      .execute();
    return rows.map((row) => ({ iban: row.iban, name: row.name, verifiedAt: new Date(Number(row.verifiedAtMs)).toISOString() }));
  }

  /** The user's verification of `iban`; `executor` is a transaction when the answer must hold until it commits. */
  async findForUser(userId: string, iban: string, executor: Kysely<Tables> = this.database.db): Promise<VerifiedBeneficiaryRecord | undefined> {
    const row = await executor
      .selectFrom('beneficiaries')
      .select(['iban', 'name', 'verifiedAtMs'])
      .where('userId', '=', userId)
      .where('iban', '=', iban)
      .executeTakeFirst();
    return row && { iban: row.iban, name: row.name, verifiedAt: new Date(Number(row.verifiedAtMs)).toISOString() };
  }

  /** Every user's verification of `iban` (electronic format), newest first; empty when nobody verified it. */
  async holdersOf(iban: string): Promise<IbanHolderRecord[]> {
    const rows = await this.database.db
      .selectFrom('beneficiaries')
      .select(['userId', 'name', 'verifiedAtMs'])
      .where('iban', '=', iban)
      .orderBy('verifiedAtMs', 'desc')
      .execute();
    return rows.map((row) => ({ userId: row.userId, name: row.name, verifiedAt: new Date(Number(row.verifiedAtMs)).toISOString() }));
  }
}
