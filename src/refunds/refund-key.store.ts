import type { Selectable } from 'kysely';
import type { ProviderRefundRequest } from '../datasources/provider-types';
import type { Database } from '../db/database';
import type { RefundKeysTable } from '../db/tables';
import { inTransaction, isUniqueViolation } from '../db/transaction';
import { KeyedMutex } from '../store/keyed-mutex';

/**
 * How long the gateway remembers a refund request's idempotency key: the provider remembers keys for 24 hours
 * (README, Refunds and payments), and a key the provider has forgotten no longer protects anything.
 */
export const REFUND_KEY_TTL_MS = 24 * 3600 * 1000;

/** One refund request under one idempotency key, written before the provider is called. */
export interface RefundAttempt {
  idempotencyKey: string;
  /** What makes two requests "the same": the payment, the amount (or its absence) and the reference. */
  fingerprint: string;
  paymentId: string;
  request: ProviderRefundRequest;
  /** True when the gateway chose the key because the client sent none. */
  generated: boolean;
  createdAt: string;
  /** Set once the provider has accepted the refund (202 { id }). */
  refundId?: string;
}

/**
 * Refund idempotency keys in the relational store, shared by every instance:
 * - `refund_keys` holds the request made under a key, so the same key with another request is refused before any
 *   provider call, and a key whose refund is known answers without a second POST;
 * - `refund_generated_keys` holds the key the gateway generated for a request that came without one, committed
 *   before the provider call (its primary key decides between instances), so a retry of that request reuses it.
 * `withKey` also serialises work on one key in this process, so the same key twice at once is one POST here;
 * across instances the provider's own idempotency on the key holds.
 */
export class RefundKeyStore {
  private readonly mutex = new KeyedMutex();

  constructor(
    private readonly database: Database,
    private readonly now: () => number = Date.now,
  ) {}

  withKey<T>(idempotencyKey: string, work: () => Promise<T>): Promise<T> {
    return this.mutex.run(`key:${idempotencyKey}`, work);
  }

  /** The key already generated for this request, or `generate()`'s, stored first; one per fingerprint across instances. */
  async generatedKeyFor(fingerprint: string, generate: () => string): Promise<string> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await inTransaction(this.database, async (trx) => {
          const now = this.now();
          await trx.deleteFrom('refundGeneratedKeys').where('fingerprint', '=', fingerprint).where('expiresAtMs', '<=', now).execute();
          const known = await trx.selectFrom('refundGeneratedKeys').select('idempotencyKey').where('fingerprint', '=', fingerprint).executeTakeFirst();
          if (known) return known.idempotencyKey;
          const key = generate();
          await trx
            .insertInto('refundGeneratedKeys')
            .values({ fingerprint, idempotencyKey: key, expiresAtMs: now + REFUND_KEY_TTL_MS })
            .execute();
          return key;
        });
      } catch (error) {
        // Another instance generated one at the same moment: read theirs.
        if (attempt < 3 && isUniqueViolation(error)) continue;
        throw error;
      }
    }
  }

  async get(idempotencyKey: string): Promise<RefundAttempt | undefined> {
    const row = await this.database.db
      .selectFrom('refundKeys')
      .selectAll()
      .where('idempotencyKey', '=', idempotencyKey)
      .where('expiresAtMs', '>', this.now())
      .executeTakeFirst();
    return row && fromRow(row);
  }

  /** Records the attempt, or its refund id once known; an expired row under the same key is replaced. */
  async put(attempt: RefundAttempt): Promise<void> {
    const createdAtMs = Date.parse(attempt.createdAt);
    await this.database.db
      .insertInto('refundKeys')
      .values({
        idempotencyKey: attempt.idempotencyKey,
        fingerprint: attempt.fingerprint,
        paymentId: attempt.paymentId,
        request: JSON.stringify(attempt.request),
        generated: attempt.generated ? 1 : 0,
        refundId: attempt.refundId ?? null,
        createdAtMs,
        expiresAtMs: createdAtMs + REFUND_KEY_TTL_MS,
      })
      .onConflict((conflict) =>
        conflict.column('idempotencyKey').doUpdateSet((eb) => ({
          fingerprint: eb.ref('excluded.fingerprint'),
          paymentId: eb.ref('excluded.paymentId'),
          request: eb.ref('excluded.request'),
          generated: eb.ref('excluded.generated'),
          refundId: eb.ref('excluded.refundId'),
          createdAtMs: eb.ref('excluded.createdAtMs'),
          expiresAtMs: eb.ref('excluded.expiresAtMs'),
        })),
      )
      .execute();
  }

  /** A request the provider refused outright was not remembered there either, so the key is free again. */
  async release(idempotencyKey: string): Promise<void> {
    await this.database.db.deleteFrom('refundKeys').where('idempotencyKey', '=', idempotencyKey).execute();
  }
}

function fromRow(row: Selectable<RefundKeysTable>): RefundAttempt {
  return {
    idempotencyKey: row.idempotencyKey,
    fingerprint: row.fingerprint,
    paymentId: row.paymentId,
    request: JSON.parse(row.request) as ProviderRefundRequest,
    generated: Number(row.generated) === 1,
    createdAt: new Date(Number(row.createdAtMs)).toISOString(),
    ...(row.refundId === null ? {} : { refundId: row.refundId }),
  };
}
