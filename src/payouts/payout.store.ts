import { sql, type Selectable, type Transaction } from 'kysely';
import type { Database } from '../platform/db/database';
import type { PayoutsTable, Tables } from '../platform/db/tables';
import { inTransaction } from '../platform/db/transaction';
import { AWAITING_APPROVAL, CONFLICT, DECLINED, EXPIRED, PENDING_SUBMISSION, payoutLifecycle, UNPAID_STATUSES } from './payout-status';
import { ownerFromKey, ownerKey, type ConfirmedPayout, type PayoutOwner, type PayoutRequest } from './payout.model';
import { storedPayoutJson } from './payout-provider.adapter';

export interface PayoutRecord {
  transactionId: string;
  owner: PayoutOwner;
  /** The exact request, so a retry resends the same body (the provider's idempotency compares it). */
  request: PayoutRequest;
  /** A gateway status (payout-status.ts) until the provider has confirmed it; then the provider's, as last seen. */
  status: string;
  /** The payout as the provider last reported it. */
  confirmed?: ConfirmedPayout;
  /** The last failed submission, for logs and support: the error code the client got and when. */
  lastError?: { code: string; at: string };
  declineReason?: string;
  /** Set when an agent proposed it (through /mcp) for its owner: the MCP client's name. */
  agentClient?: string;
  /** While a submission claim is held: when its lease ends unless its holder renews it. */
  claimedUntilMs?: number;
  createdAtMs: number;
  updatedAtMs: number;
  queuedAtMs: number;
}

export interface NewPayout {
  owner: PayoutOwner;
  request: PayoutRequest;
  /** Set when the client sent no transactionId: an identical request within the window answers this payout. */
  fingerprint?: { value: string; windowMs: number };
  /** The MCP client proposing it for its owner, when an agent asks. */
  agentClient?: string;
}

/**
 * Payouts in the relational store. Every change that depends on what is already there (a limit, an idempotency
 * fingerprint, a submission claim, a status move) is one statement, or queries on one transaction under the payout
 * locks (underPayoutLocks, run by payout-transactions.ts), so any number of instances sharing the database see one
 * history.
 */
export class PayoutStore {
  constructor(
    private readonly database: Database,
    /** The clock of every payout time (windows, claims, expiries); tests step it instead of waiting. */
    readonly now: () => number = Date.now,
  ) {}

  async get(transactionId: string): Promise<PayoutRecord | undefined> {
    const row = await this.database.db.selectFrom('payouts').selectAll().where('transactionId', '=', transactionId).executeTakeFirst();
    return row && fromRow(row);
  }

  /** The recorded payouts among these transaction ids, read in one query (node(id:) asks for a batch). */
  async getMany(transactionIds: readonly string[]): Promise<PayoutRecord[]> {
    if (transactionIds.length === 0) return [];
    const rows = await this.database.db
      .selectFrom('payouts')
      .selectAll()
      .where('transactionId', 'in', [...new Set(transactionIds)])
      .execute();
    return rows.map(fromRow);
  }

  /**
   * Runs `work` in one transaction in which one owner's payouts, and the payouts to one IBAN, are admitted one at a
   * time across instances (the daily caps per user and per IBAN). On PostgreSQL transaction-scoped advisory locks on
   * the owner and then the IBAN, under READ COMMITTED so that every statement after the locks sees what the previous
   * holder committed: parallel payouts queue instead of failing serialization over and over (twenty at once would
   * exhaust any retry budget). Every caller takes the owner's lock before the IBAN's and holds one of each, so two
   * can never wait on each other. On SQLite every write transaction is IMMEDIATE, which already serialises them.
   */
  underPayoutLocks<T>(owner: PayoutOwner, iban: string, work: (trx: Transaction<Tables>) => Promise<T>): Promise<T> {
    if (this.database.kind !== 'postgres') return inTransaction(this.database, work);
    return this.database.db
      .transaction()
      .setIsolationLevel('read committed')
      .execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtextextended(${`payout-owner:${ownerKey(owner)}`}, 0))`.execute(trx);
        await sql`select pg_advisory_xact_lock(hashtextextended(${`payout-iban:${iban}`}, 0))`.execute(trx);
        return work(trx);
      });
  }

  /** The payout under this transaction id, as `trx` sees it. */
  async findIn(trx: Transaction<Tables>, transactionId: string): Promise<PayoutRecord | undefined> {
    const row = await trx.selectFrom('payouts').selectAll().where('transactionId', '=', transactionId).executeTakeFirst();
    return row && fromRow(row);
  }

  /** The payout an identical request made within its window (an expired fingerprint is dropped first). */
  async findByFingerprintIn(trx: Transaction<Tables>, fingerprint: string, now: number): Promise<PayoutRecord | undefined> {
    await trx.deleteFrom('payoutFingerprints').where('fingerprint', '=', fingerprint).where('expiresAtMs', '<=', now).execute();
    const earlier = await trx
      .selectFrom('payoutFingerprints')
      .innerJoin('payouts', 'payouts.transactionId', 'payoutFingerprints.transactionId')
      .selectAll('payouts')
      .where('payoutFingerprints.fingerprint', '=', fingerprint)
      .executeTakeFirst();
    return earlier && fromRow(earlier);
  }

  /** Inserts a new payout with `status`, and its fingerprint for the window when it has one. */
  async insertIn(trx: Transaction<Tables>, payout: NewPayout, status: string, now: number): Promise<PayoutRecord> {
    const { request, fingerprint } = payout;
    const row: Selectable<PayoutsTable> = {
      transactionId: request.transactionId,
      owner: ownerKey(payout.owner),
      status,
      currency: request.currency,
      amountInMinor: request.amountInMinor,
      request: storedPayoutJson.request(request),
      beneficiaryIban: request.beneficiaryIban,
      withdrawal: null,
      lastError: null,
      declineReason: null,
      agentClient: payout.agentClient ?? null,
      claimedBy: null,
      claimedUntilMs: null,
      queuedAtMs: now,
      createdAtMs: now,
      updatedAtMs: now,
    };
    await trx.insertInto('payouts').values(row).execute();
    if (fingerprint) {
      await trx
        .insertInto('payoutFingerprints')
        .values({ fingerprint: fingerprint.value, transactionId: request.transactionId, expiresAtMs: now + fingerprint.windowMs })
        .execute();
    }
    return fromRow(row);
  }

  /**
   * The owner's amount in `currency` over the 24 h before `now` that moved or may still move money (payouts the
   * provider refused, or that were declined or expired, do not count), leaving out `excluding` (a payout being
   * approved). A payout counts from when it became sendable: an approved one from its approval, when its money
   * left.
   */
  async dailyTotal(trx: Transaction<Tables>, owner: PayoutOwner, currency: string, now: number, excluding?: string): Promise<number> {
    let query = trx
      .selectFrom('payouts')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amountInMinor'), eb.val(0)).as('total'))
      .where('owner', '=', ownerKey(owner))
      .where('currency', '=', currency)
      .where('queuedAtMs', '>', now - DAY_MS)
      .where('status', 'not in', UNPAID_STATUSES);
    if (excluding !== undefined) query = query.where('transactionId', '!=', excluding);
    return Number((await query.executeTakeFirstOrThrow()).total);
  }

  /**
   * What every user together paid or may still pay to `iban` in `currency` over the 24 h before `now`, counted
   * as dailyTotal counts; merchant keys' own payouts are the merchant's judgement and are left out.
   */
  async beneficiaryTotal(trx: Transaction<Tables>, iban: string, currency: string, now: number, excluding?: string): Promise<number> {
    let query = trx
      .selectFrom('payouts')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amountInMinor'), eb.val(0)).as('total'))
      .where('beneficiaryIban', '=', iban)
      .where('owner', 'like', 'user:%')
      .where('currency', '=', currency)
      .where('queuedAtMs', '>', now - DAY_MS)
      .where('status', 'not in', UNPAID_STATUSES);
    if (excluding !== undefined) query = query.where('transactionId', '!=', excluding);
    return Number((await query.executeTakeFirstOrThrow()).total);
  }

  /** A user revoked with revokeUser (or no longer known), as `trx` sees the users: their payouts are never sent. */
  async isUserRevokedIn(trx: Transaction<Tables>, userId: string): Promise<boolean> {
    const user = await trx.selectFrom('users').select('revokedAtMs').where('id', '=', userId).executeTakeFirst();
    return !user || user.revokedAtMs !== null;
  }

  /** Moves the payout from `from` to `to` in `trx` unless another instance moved it first. */
  async moveIn(trx: Transaction<Tables>, transactionId: string, from: string, to: string, now: number): Promise<PayoutRecord | undefined> {
    const result = await trx
      .updateTable('payouts')
      .set({ status: to, updatedAtMs: now, ...(to === PENDING_SUBMISSION ? { queuedAtMs: now } : {}) })
      .where('transactionId', '=', transactionId)
      .where('status', '=', from)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return undefined;
    return this.findIn(trx, transactionId);
  }

  /**
   * Payouts that waited for approval longer than `expiryMs` since they were recorded, marked expired (never to be
   * sent) and returned so their subscribers can be told; at most `limit` per call, oldest first.
   */
  async expireAwaitingApproval(expiryMs: number, limit: number): Promise<PayoutRecord[]> {
    const now = this.now();
    const overdue = await this.database.db
      .selectFrom('payouts')
      .select('transactionId')
      .where('status', '=', AWAITING_APPROVAL)
      .where('createdAtMs', '<=', now - expiryMs)
      .orderBy('createdAtMs')
      .limit(limit)
      .execute();
    const expired: PayoutRecord[] = [];
    for (const { transactionId } of overdue) {
      // One row at a time, each only if still awaiting: an approval that got there first wins.
      const record = await this.transition(transactionId, AWAITING_APPROVAL, EXPIRED);
      if (record) expired.push(record);
    }
    return expired;
  }

  /**
   * Takes the right to send a pending payout to the provider for `holdMs`: true for exactly one caller at a time
   * across instances, and never for a payout that is no longer pending-submission or was queued `expiryMs` ago
   * (so nothing is sent while the reconciler may be expiring it).
   */
  async claim(transactionId: string, claimant: string, holdMs: number, expiryMs: number): Promise<boolean> {
    const now = this.now();
    const result = await this.database.db
      .updateTable('payouts')
      .set({ claimedBy: claimant, claimedUntilMs: now + holdMs })
      .where('transactionId', '=', transactionId)
      .where('status', '=', PENDING_SUBMISSION)
      .where('queuedAtMs', '>', now - expiryMs)
      .where((eb) => eb.or([eb('claimedUntilMs', 'is', null), eb('claimedUntilMs', '<=', now)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Extends this claimant's claim to `holdMs` from now, while its send is still running: the heartbeat that keeps a
   * live instance's claim, so that one whose instance is gone expires within `holdMs`. False when the claim is no
   * longer this claimant's.
   */
  async renewClaim(transactionId: string, claimant: string, holdMs: number): Promise<boolean> {
    const result = await this.database.db
      .updateTable('payouts')
      .set({ claimedUntilMs: this.now() + holdMs })
      .where('transactionId', '=', transactionId)
      .where('claimedBy', '=', claimant)
      .where('claimedUntilMs', 'is not', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Stores the provider's payout (its status becomes the payout's) and ends any claim. */
  async confirm(transactionId: string, confirmed: ConfirmedPayout): Promise<PayoutRecord | undefined> {
    await this.database.db
      .updateTable('payouts')
      .set({
        withdrawal: storedPayoutJson.confirmed(confirmed),
        status: confirmed.status,
        lastError: null,
        claimedBy: null,
        claimedUntilMs: null,
        updatedAtMs: this.now(),
      })
      .where('transactionId', '=', transactionId)
      // Declined payouts were never sent; an expired one the provider does hold is the provider's truth; a conflict
      // stays one until an operator settles it, whatever a later answer says.
      .where('status', 'not in', [DECLINED, CONFLICT])
      .execute();
    return this.get(transactionId);
  }

  /** A submission that failed without an answer that settles it: kept, with why, for a retry or the reconciler. */
  async noteFailure(transactionId: string, claimant: string, code: string): Promise<void> {
    await this.database.db
      .updateTable('payouts')
      .set({ lastError: JSON.stringify({ code, at: new Date(this.now()).toISOString() }), claimedBy: null, claimedUntilMs: null, updatedAtMs: this.now() })
      .where('transactionId', '=', transactionId)
      .where('claimedBy', '=', claimant)
      .execute();
  }

  /**
   * Keeps a payout the provider may have made under other fields than its request as `conflict`, with `code` as its
   * last error: never sent again, still counted by dailyTotal and beneficiaryTotal. Only a payout the provider never
   * confirmed moves; undefined when it was not one.
   */
  async markConflict(transactionId: string, code: string): Promise<PayoutRecord | undefined> {
    const now = this.now();
    const result = await this.database.db
      .updateTable('payouts')
      .set({ status: CONFLICT, lastError: JSON.stringify({ code, at: new Date(now).toISOString() }), claimedBy: null, claimedUntilMs: null, updatedAtMs: now })
      .where('transactionId', '=', transactionId)
      .where('status', '=', PENDING_SUBMISSION)
      .where('withdrawal', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1 ? this.get(transactionId) : undefined;
  }

  /**
   * For a request the provider refused outright: nothing was paid, so nothing is kept (its fingerprint goes too).
   * Only a payout still pending submission goes; one confirmed or kept as conflict since stays.
   */
  async remove(transactionId: string): Promise<void> {
    await inTransaction(this.database, async (trx) => {
      const row = await trx
        .selectFrom('payouts')
        .select('transactionId')
        .where('transactionId', '=', transactionId)
        .where('status', '=', PENDING_SUBMISSION)
        .where('withdrawal', 'is', null)
        .executeTakeFirst();
      if (!row) return;
      await trx.deleteFrom('payoutFingerprints').where('transactionId', '=', transactionId).execute();
      await trx.deleteFrom('payouts').where('transactionId', '=', transactionId).execute();
    });
  }

  /** Moves a payout from `from` to `to` (approval, decline, expiry); undefined when it was not in `from`. */
  async transition(transactionId: string, from: string, to: string, changes: { declineReason?: string } = {}): Promise<PayoutRecord | undefined> {
    const now = this.now();
    const result = await this.database.db
      .updateTable('payouts')
      .set({ status: to, updatedAtMs: now, ...(to === PENDING_SUBMISSION ? { queuedAtMs: now } : {}), ...changes })
      .where('transactionId', '=', transactionId)
      .where('status', '=', from)
      .where('withdrawal', 'is', null)
      // Never under a submission in progress: its outcome decides.
      .where((eb) => eb.or([eb('claimedUntilMs', 'is', null), eb('claimedUntilMs', '<=', now)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1 ? this.get(transactionId) : undefined;
  }

  /** The owner's payouts, newest first. */
  async listForOwner(owner: PayoutOwner): Promise<PayoutRecord[]> {
    const rows = await this.database.db
      .selectFrom('payouts')
      .selectAll()
      .where('owner', '=', ownerKey(owner))
      .orderBy('createdAtMs', 'desc')
      .orderBy('transactionId', 'desc')
      .execute();
    return rows.map(fromRow);
  }

  /** Payouts the provider has not confirmed yet and nobody is sending now, oldest first (the reconciler's). */
  async unconfirmed(limit: number): Promise<PayoutRecord[]> {
    const now = this.now();
    const rows = await this.database.db
      .selectFrom('payouts')
      .selectAll()
      .where('status', '=', PENDING_SUBMISSION)
      .where((eb) => eb.or([eb('claimedUntilMs', 'is', null), eb('claimedUntilMs', '<=', now)]))
      .orderBy('queuedAtMs')
      .limit(limit)
      .execute();
    return rows.map(fromRow);
  }

  /** Payouts the provider confirmed that have not reached a final stage, least recently checked first. */
  async inFlight(limit: number): Promise<PayoutRecord[]> {
    const rows = await this.database.db
      .selectFrom('payouts')
      .selectAll()
      .where('withdrawal', 'is not', null)
      .where('status', 'not in', [...payoutLifecycle.final])
      .orderBy('updatedAtMs')
      .limit(limit)
      .execute();
    return rows.map(fromRow);
  }

  /** Marks a stored payout as checked, so the reconciler's least-recently-checked order moves on. */
  async touch(transactionId: string): Promise<void> {
    await this.database.db.updateTable('payouts').set({ updatedAtMs: this.now() }).where('transactionId', '=', transactionId).execute();
  }
}

const DAY_MS = 24 * 60 * 60 * 1000;

function fromRow(row: Selectable<PayoutsTable>): PayoutRecord {
  const confirmed = row.withdrawal === null ? undefined : storedPayoutJson.parseConfirmed(row.withdrawal, row.transactionId);
  return {
    transactionId: row.transactionId,
    owner: ownerFromKey(row.owner),
    request: storedPayoutJson.parseRequest(row.request),
    status: row.status,
    ...(confirmed ? { confirmed } : {}),
    ...(row.lastError === null ? {} : { lastError: JSON.parse(row.lastError) as { code: string; at: string } }),
    ...(row.declineReason === null ? {} : { declineReason: row.declineReason }),
    ...(row.agentClient === null || row.agentClient === undefined ? {} : { agentClient: row.agentClient }),
    ...(row.claimedUntilMs === null ? {} : { claimedUntilMs: Number(row.claimedUntilMs) }),
    createdAtMs: Number(row.createdAtMs),
    updatedAtMs: Number(row.updatedAtMs),
    queuedAtMs: Number(row.queuedAtMs),
  };
}
