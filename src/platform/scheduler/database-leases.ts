import { randomUUID } from 'node:crypto';
import type { Leases } from './lease';
import type { Database } from '../db/database';

/**
 * Leases in the relational store, for background jobs that one instance at a time must run (the instances share
 * the database even when they share no Redis). Taking and renewing is one upsert whose WHERE decides: the row is
 * written only when it is free, expired, or already ours, so two instances can never both hold it.
 */
export class DatabaseLeases implements Leases {
  readonly holderId = randomUUID();

  constructor(
    private readonly database: Database,
    private readonly now: () => number = Date.now,
  ) {}

  async hold(name: string, ttlMs: number): Promise<boolean> {
    const now = this.now();
    const row = await this.database.db
      .insertInto('leases')
      .values({ name, holder: this.holderId, expiresAtMs: now + Math.ceil(ttlMs) })
      .onConflict((conflict) =>
        conflict
          .column('name')
          .doUpdateSet((eb) => ({ holder: eb.ref('excluded.holder'), expiresAtMs: eb.ref('excluded.expiresAtMs') }))
          .where((eb) => eb.or([eb('leases.holder', '=', this.holderId), eb('leases.expiresAtMs', '<=', now)])),
      )
      .returning('holder')
      .executeTakeFirst();
    return row?.holder === this.holderId;
  }

  async release(name: string): Promise<void> {
    await this.database.db.deleteFrom('leases').where('name', '=', name).where('holder', '=', this.holderId).execute();
  }
}
