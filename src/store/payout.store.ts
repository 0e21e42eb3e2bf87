import type Keyv from 'keyv';
import type { ProviderWithdrawal, ProviderWithdrawalRequest } from '../datasources/provider-types';
import { KeyedMutex } from './keyed-mutex';

/** Who created a payout: a session's user, or a merchant key (by its id, never the key). */
export type PayoutOwner = { kind: 'user'; userId: string } | { kind: 'merchant'; keyId: string };

/** Recorded before the provider is called and not yet confirmed by it. */
export const PENDING_SUBMISSION = 'pending-submission';

export interface PayoutRecord {
  transactionId: string;
  owner: PayoutOwner;
  /** The exact withdrawal request, so a retry resends the same body (the provider's idempotency compares it). */
  request: ProviderWithdrawalRequest;
  createdAt: string;
  updatedAt: string;
  /** `pending-submission` until the provider has answered; then the provider's status as last seen. */
  status: string;
  /** The provider's withdrawal as last seen. */
  withdrawal?: ProviderWithdrawal;
  /** The last failed submission, for logs and support: the error code the client got and when. */
  lastError?: { code: string; at: string };
}

type StoredValue = PayoutRecord | string[];

/**
 * Payouts created through the gateway, durable (STORE_URL): `payout:<transactionId>` is the record, and
 * `owner:<user:id|merchant:id>` lists an owner's transaction ids in creation order, for Viewer.payouts.
 * `withPayout` serialises all work on one transaction id in this process, so the same id sent twice at once gives
 * one provider call; across instances the provider's own deduplication by transaction_id is what holds.
 */
export class PayoutStore {
  private readonly mutex = new KeyedMutex();

  constructor(private readonly keyv: Keyv<StoredValue>) {}

  withPayout<T>(transactionId: string, work: () => Promise<T>): Promise<T> {
    return this.mutex.run(`payout:${transactionId}`, work);
  }

  async get(transactionId: string): Promise<PayoutRecord | undefined> {
    return (await this.keyv.get(`payout:${transactionId}`)) as PayoutRecord | undefined;
  }

  /** The record first, then the owner's index: a record missing from the index is still found by id. */
  async create(record: PayoutRecord): Promise<void> {
    await this.keyv.set(`payout:${record.transactionId}`, record);
    const indexKey = ownerKey(record.owner);
    await this.mutex.run(indexKey, async () => {
      const ids = ((await this.keyv.get(indexKey)) ?? []) as string[];
      if (!ids.includes(record.transactionId)) await this.keyv.set(indexKey, [...ids, record.transactionId]);
    });
  }

  async save(record: PayoutRecord): Promise<void> {
    await this.keyv.set(`payout:${record.transactionId}`, record);
  }

  /** For a request the provider refused outright: nothing was paid, so nothing is kept. */
  async remove(record: PayoutRecord): Promise<void> {
    const indexKey = ownerKey(record.owner);
    await this.mutex.run(indexKey, async () => {
      const ids = ((await this.keyv.get(indexKey)) ?? []) as string[];
      await this.keyv.set(indexKey, ids.filter((id) => id !== record.transactionId));
    });
    await this.keyv.delete(`payout:${record.transactionId}`);
  }

  /** The owner's payouts, newest first. */
  async listForOwner(owner: PayoutOwner): Promise<PayoutRecord[]> {
    const ids = ((await this.keyv.get(ownerKey(owner))) ?? []) as string[];
    // Reversed first, so payouts created in the same millisecond still come newest first after the stable sort.
    const records = await Promise.all([...ids].reverse().map((id) => this.get(id)));
    return records
      .filter((record): record is PayoutRecord => record !== undefined)
      .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  }
}

export function ownerKey(owner: PayoutOwner): string {
  return owner.kind === 'user' ? `owner:user:${owner.userId}` : `owner:merchant:${owner.keyId}`;
}

export function sameOwner(a: PayoutOwner, b: PayoutOwner): boolean {
  return ownerKey(a) === ownerKey(b);
}
