import { sql, type Selectable } from 'kysely';
import type { ProviderRefundRequest } from '../platform/provider/provider-types';
import type { Database } from '../platform/db/database';
import type { RefundKeysTable } from '../platform/db/tables';
import { isUniqueViolation } from '../platform/db/transaction';
import { KeyedMutex } from '../platform/store/keyed-mutex';
import type { Logger } from '../platform/observability/logger';

/**
 * How long the gateway remembers a refund request's idempotency key once a client has been given its refund: the
 * provider remembers keys for 24 hours (README, Refunds and payments). A key whose refund no client has been given
 * yet (its outcome unknown, or found only by the reconciler) is kept until one has.
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
  /** Set once the refund made under the key is known (the provider's 202 { id }, or found in its refund list). */
  refundId?: string;
  /** True once a client has been given that refund. */
  answered: boolean;
  /** When the request was last sent to the provider (epoch ms). */
  sentAtMs: number;
}

/** How a refund came to be claimed for an attempt: the provider's answer under its key, or a match in the refund list. */
export type ClaimSource = 'provider_answer' | 'refund_list';

/** A claim of `refundId` for `idempotencyKey` that was not recorded: another key holds the refund, or the key another refund. */
export interface ClaimConflict {
  claim: ClaimSource;
  paymentId: string;
  refundId: string;
  idempotencyKey: string;
  /** The key that holds the refund. */
  heldBy?: string;
  /** The refund the key held already. */
  keyHolds?: string;
}

/** Where the store reports claim conflicts: the log, and the metric `bankgraph_refund_claim_conflicts_total`. */
export interface RefundClaimObserver {
  logger?: Logger;
  onClaimConflict?(claim: ClaimSource): void;
}

/** What `record` found under a key: the attempt stored first, and whether this call stored it. */
export interface RecordedAttempt {
  attempt: RefundAttempt;
  created: boolean;
}

/**
 * Refund idempotency keys in the relational store, shared by every instance:
 * - `refund_keys` holds the request made under a key, written once (insert-if-absent): the same key with another
 *   request is refused before any provider call, quoting the request stored first, and a key whose refund is
 *   known answers without a second POST;
 * - `refund_generated_keys` holds the key the gateway generated for a request that came without one, written once
 *   per request fingerprint (its primary key decides between instances), so a retry of that request reuses it.
 * Both are single statements, never a serializable transaction, so concurrent refunds on several instances never
 * fail on a serialization conflict. `withKey` also serialises work on one key in this process, so the same key
 * twice at once is one POST here; across instances the provider's own idempotency on the key holds.
 */
export class RefundKeyStore {
  private readonly mutex = new KeyedMutex();

  constructor(
    private readonly database: Database,
    readonly now: () => number = Date.now,
    private readonly observer: RefundClaimObserver = {},
  ) {}

  withKey<T>(idempotencyKey: string, work: () => Promise<T>): Promise<T> {
    return this.mutex.run(`key:${idempotencyKey}`, work);
  }

  /**
   * The key already generated for this request, or `generate()`'s, stored first; one per fingerprint across
   * instances. A generated key is replaced only once it is past its 24 hours and the attempt made under it is
   * forgotten too: while that attempt's refund has not reached a client, a retry must find it.
   */
  async generatedKeyFor(fingerprint: string, generate: () => string): Promise<string> {
    const now = this.now();
    await this.database.db
      .insertInto('refundGeneratedKeys')
      .values({ fingerprint, idempotencyKey: generate(), expiresAtMs: now + REFUND_KEY_TTL_MS })
      .onConflict((conflict) =>
        conflict
          .column('fingerprint')
          .doUpdateSet((eb) => ({ idempotencyKey: eb.ref('excluded.idempotencyKey'), expiresAtMs: eb.ref('excluded.expiresAtMs') }))
          .where('refundGeneratedKeys.expiresAtMs', '<=', now)
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('refundKeys')
                  .select(sql.lit(1).as('live'))
                  .whereRef('refundKeys.idempotencyKey', '=', 'refundGeneratedKeys.idempotencyKey')
                  .where((eb) => eb.or([eb('refundKeys.answered', '=', 0), eb('refundKeys.expiresAtMs', '>', now)])),
              ),
            ),
          ),
      )
      .execute();
    const stored = await this.database.db
      .selectFrom('refundGeneratedKeys')
      .select('idempotencyKey')
      .where('fingerprint', '=', fingerprint)
      .executeTakeFirstOrThrow();
    return stored.idempotencyKey;
  }

  /** The attempt under the key, unless it expired (only attempts whose refund a client has been given expire). */
  async get(idempotencyKey: string): Promise<RefundAttempt | undefined> {
    const row = await this.database.db
      .selectFrom('refundKeys')
      .selectAll()
      .where('idempotencyKey', '=', idempotencyKey)
      .where((eb) => eb.or([eb('answered', '=', 0), eb('expiresAtMs', '>', this.now())]))
      .executeTakeFirst();
    return row && fromRow(row);
  }

  /**
   * Stores the attempt unless one is already stored under its key, and answers the one stored first: a request is
   * never overwritten by another under the same key, on any instance. Only an expired attempt is replaced.
   */
  async record(attempt: Omit<RefundAttempt, 'refundId' | 'answered' | 'sentAtMs'>): Promise<RecordedAttempt> {
    const createdAtMs = Date.parse(attempt.createdAt);
    const result = await this.database.db
      .insertInto('refundKeys')
      .values({ ...requestColumns(attempt), refundId: null, createdAtMs, expiresAtMs: createdAtMs + REFUND_KEY_TTL_MS, answered: 0, sentAtMs: createdAtMs })
      .onConflict((conflict) =>
        conflict
          .column('idempotencyKey')
          .doUpdateSet((eb) => ({
            fingerprint: eb.ref('excluded.fingerprint'),
            paymentId: eb.ref('excluded.paymentId'),
            request: eb.ref('excluded.request'),
            generated: eb.ref('excluded.generated'),
            refundId: null,
            createdAtMs: eb.ref('excluded.createdAtMs'),
            expiresAtMs: eb.ref('excluded.expiresAtMs'),
            answered: 0,
            sentAtMs: eb.ref('excluded.sentAtMs'),
          }))
          .where('refundKeys.answered', '=', 1)
          .where('refundKeys.expiresAtMs', '<=', createdAtMs),
      )
      .executeTakeFirst();
    const stored = await this.get(attempt.idempotencyKey);
    // Released (refused outright) between the two statements: nothing is stored, so this request is the first.
    if (!stored) return this.record(attempt);
    return { attempt: stored, created: Number(result.numInsertedOrUpdatedRows ?? 0) > 0 };
  }

  /**
   * Notes that the attempt is being sent again now, so the reconciler leaves it alone; false when it is not
   * waiting for an outcome any more (settled meanwhile, or forgotten as never made).
   */
  async markSent(idempotencyKey: string): Promise<boolean> {
    const result = await this.database.db
      .updateTable('refundKeys')
      .set({ sentAtMs: this.now() })
      .where('idempotencyKey', '=', idempotencyKey)
      .where('refundId', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Records the refund made under the attempt's key, once: `answered` says a client is being given it now (the key
   * is then remembered 24 hours from now), `source` how it was learnt. Answers the refund the key holds after the
   * write: this one, or one recorded under the key before (never replaced). A refund another key holds is never
   * taken from it, whatever the source: the claim is not recorded, the attempt stays pending, the conflict is
   * logged and counted, and undefined is answered.
   */
  async recordRefund(attempt: RefundAttempt, refundId: string, options: { answered: boolean; source: ClaimSource }): Promise<string | undefined> {
    const now = this.now();
    const createdAtMs = Date.parse(attempt.createdAt);
    try {
      await this.database.db
        .insertInto('refundKeys')
        .values({
          ...requestColumns(attempt),
          refundId,
          createdAtMs,
          expiresAtMs: options.answered ? now + REFUND_KEY_TTL_MS : createdAtMs + REFUND_KEY_TTL_MS,
          answered: options.answered ? 1 : 0,
          sentAtMs: attempt.sentAtMs,
        })
        // The request stored under the key stays as it is; only the outcome is filled in, once.
        .onConflict((conflict) =>
          conflict
            .column('idempotencyKey')
            .doUpdateSet((eb) => ({
              refundId: eb.ref('excluded.refundId'),
              answered: options.answered ? eb.ref('excluded.answered') : eb.ref('refundKeys.answered'),
              expiresAtMs: options.answered ? eb.ref('excluded.expiresAtMs') : eb.ref('refundKeys.expiresAtMs'),
            }))
            .where('refundKeys.fingerprint', '=', attempt.fingerprint)
            .where((eb) => eb.or([eb('refundKeys.refundId', 'is', null), eb('refundKeys.refundId', '=', refundId)])),
        )
        .execute();
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      await this.claimConflict(attempt, refundId, options.source);
      return undefined;
    }
    const stored = await this.database.db
      .selectFrom('refundKeys')
      .select('refundId')
      .where('idempotencyKey', '=', attempt.idempotencyKey)
      .where('fingerprint', '=', attempt.fingerprint)
      .executeTakeFirst();
    const held = stored?.refundId ?? undefined;
    // The provider's own answer under a key that holds another refund: that one was matched wrongly, and stays.
    if (held !== undefined && held !== refundId && options.source === 'provider_answer') {
      this.reportConflict({ claim: options.source, paymentId: attempt.paymentId, refundId, idempotencyKey: attempt.idempotencyKey, keyHolds: held });
    }
    return held;
  }

  /** A known refund handed to a client for the first time: from now, the key is remembered 24 hours more. */
  async markAnswered(idempotencyKey: string): Promise<void> {
    await this.database.db
      .updateTable('refundKeys')
      .set({ answered: 1, expiresAtMs: this.now() + REFUND_KEY_TTL_MS })
      .where('idempotencyKey', '=', idempotencyKey)
      .where('answered', '=', 0)
      .execute();
  }

  /** Every attempt stored for the payment: those with a refund claim it, the others are still pending. */
  async attemptsOfPayment(paymentId: string): Promise<RefundAttempt[]> {
    const rows = await this.database.db.selectFrom('refundKeys').selectAll().where('paymentId', '=', paymentId).execute();
    return rows.map(fromRow);
  }

  /** Attempts still waiting for an outcome that nobody has sent since `sentBefore`, oldest first. */
  async unsettled(sentBefore: number, limit: number): Promise<RefundAttempt[]> {
    const rows = await this.database.db
      .selectFrom('refundKeys')
      .selectAll()
      .where('refundId', 'is', null)
      .where('sentAtMs', '<=', sentBefore)
      .orderBy('createdAtMs')
      .limit(limit)
      .execute();
    return rows.map(fromRow);
  }

  /**
   * The provider made no refund under the key (refused outright, or settled as never made): the key is free again.
   * Only the request stored under it is removed, and only while its outcome is unknown; with `notSentSince`, only if
   * no request has sent it again since then.
   */
  async release(attempt: Pick<RefundAttempt, 'idempotencyKey' | 'fingerprint'>, notSentSince?: number): Promise<boolean> {
    let query = this.database.db
      .deleteFrom('refundKeys')
      .where('idempotencyKey', '=', attempt.idempotencyKey)
      .where('fingerprint', '=', attempt.fingerprint)
      .where('refundId', 'is', null);
    if (notSentSince !== undefined) query = query.where('sentAtMs', '<=', notSentSince);
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  private async claimConflict(attempt: RefundAttempt, refundId: string, claim: ClaimSource): Promise<void> {
    const holder = await this.database.db.selectFrom('refundKeys').select('idempotencyKey').where('refundId', '=', refundId).executeTakeFirst();
    this.reportConflict({
      claim,
      paymentId: attempt.paymentId,
      refundId,
      idempotencyKey: attempt.idempotencyKey,
      ...(holder ? { heldBy: holder.idempotencyKey } : {}),
    });
  }

  private reportConflict(conflict: ClaimConflict): void {
    this.observer.onClaimConflict?.(conflict.claim);
    this.observer.logger?.warn(conflict, 'refund claim conflict: the refund stays with the key it was recorded under first, and this claim is not recorded');
  }
}

/** The columns that hold what was asked under a key: written with the first attempt, never changed after. */
function requestColumns(attempt: Pick<RefundAttempt, 'idempotencyKey' | 'fingerprint' | 'paymentId' | 'request' | 'generated'>) {
  return {
    idempotencyKey: attempt.idempotencyKey,
    fingerprint: attempt.fingerprint,
    paymentId: attempt.paymentId,
    request: JSON.stringify(attempt.request),
    generated: attempt.generated ? 1 : 0,
  };
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
    answered: Number(row.answered) === 1,
    sentAtMs: Number(row.sentAtMs),
  };
}
