import type Keyv from 'keyv';
import { KeyedMutex } from './keyed-mutex';

/** An IBAN a user proved is theirs: the bank reported it with a holder whose name matched (verifyAccountHolder). */
export interface VerifiedBeneficiaryRecord {
  /** Electronic format: no spaces, upper case. */
  iban: string;
  /** The holder's name as the bank reported it, not as the user typed it. */
  name: string;
  verifiedAt: string;
}

/** One user's verification of an IBAN, as the global index keeps it for merchant payouts. */
export interface IbanHolderRecord {
  userId: string;
  name: string;
  verifiedAt: string;
}

type StoredValue = VerifiedBeneficiaryRecord[] | IbanHolderRecord[];

/**
 * Verified beneficiaries, durable (STORE_URL): `user:<userId>` lists a user's verified IBANs, newest verification
 * first; `iban:<IBAN>` lists who verified an IBAN and under which holder name, so a merchant key's payout can be
 * checked against any user's verification without scanning every user. Both are read-modify-write lists, so every
 * update of one key runs under a per-key lock.
 */
export class BeneficiaryStore {
  private readonly mutex = new KeyedMutex();

  constructor(private readonly keyv: Keyv<StoredValue>) {}

  /** Adds or refreshes each entry (one per IBAN per user); a re-verification moves it to the front. */
  async recordVerified(userId: string, entries: readonly VerifiedBeneficiaryRecord[]): Promise<void> {
    if (entries.length === 0) return;
    const userKey = `user:${userId}`;
    await this.mutex.run(userKey, async () => {
      const current = ((await this.keyv.get(userKey)) ?? []) as VerifiedBeneficiaryRecord[];
      const fresh = new Set(entries.map((entry) => entry.iban));
      await this.keyv.set(userKey, [...entries, ...current.filter((entry) => !fresh.has(entry.iban))]);
    });
    // The index is written after the user's own list: a crash in between leaves a user able to pay an IBAN a
    // merchant cannot yet, never the reverse. Re-verifying repairs it.
    await Promise.all(
      entries.map((entry) => {
        const ibanKey = `iban:${entry.iban}`;
        return this.mutex.run(ibanKey, async () => {
          const holders = ((await this.keyv.get(ibanKey)) ?? []) as IbanHolderRecord[];
          const others = holders.filter((holder) => holder.userId !== userId);
          await this.keyv.set(ibanKey, [{ userId, name: entry.name, verifiedAt: entry.verifiedAt }, ...others]);
        });
      }),
    );
  }

  async listForUser(userId: string): Promise<VerifiedBeneficiaryRecord[]> {
    return ((await this.keyv.get(`user:${userId}`)) ?? []) as VerifiedBeneficiaryRecord[];
  }

  async findForUser(userId: string, iban: string): Promise<VerifiedBeneficiaryRecord | undefined> {
    return (await this.listForUser(userId)).find((entry) => entry.iban === iban);
  }

  /** Every user's verification of `iban` (electronic format), newest first; empty when nobody verified it. */
  async holdersOf(iban: string): Promise<IbanHolderRecord[]> {
    return ((await this.keyv.get(`iban:${iban}`)) ?? []) as IbanHolderRecord[];
  }
}
