import type { Kysely } from 'kysely';
import type { Tables } from '../platform/db/tables';
import type { BearerAuth, CallOptions } from '../platform/provider/http.client';
import type { ProviderVerificationResult } from '../platform/provider/provider-types';
import type { VerificationClient } from '../platform/provider/verification.client';
import { NotFoundError } from '../platform/errors/gateway-errors';
import type { BeneficiaryLedger, IbanHolderRecord, VerifiedBeneficiaryRecord } from './beneficiary.store';
import { mergeVerifications, verifiedBeneficiariesFrom } from './verification-results';

/** One of the user's active bank connections, with the bearer its provider calls use. */
export interface BankAccess {
  connectionId: string;
  bearer: BearerAuth;
}

/** The signed-in user who verifies a name, and the banks to ask. */
export interface VerifyingUser {
  userId: string;
  /** The user's active bank connections; the name may hold an account at any of them. */
  banks: readonly BankAccess[];
}

export interface BeneficiaryServiceDeps {
  verification: VerificationClient;
  ledger: BeneficiaryLedger;
  /** Epoch ms: when a beneficiary was verified. */
  clock: () => number;
}

/**
 * Account-holder verification and the beneficiaries it proves: an IBAN a user verified is where payouts may go
 * (payouts read `findForUser` and `holdersOf`).
 */
export class BeneficiaryService {
  constructor(private readonly deps: BeneficiaryServiceDeps) {}

  /**
   * Checks `name` (already validated) against the holders of the user's accounts at every bank at once. Every
   * account whose holder matched is remembered as a verified beneficiary of the user, before answering, so a client
   * that goes straight on to createPayout finds it.
   */
  async verify(user: VerifyingUser, name: string, options: CallOptions): Promise<ProviderVerificationResult> {
    if (user.banks.length === 0) throw new NotFoundError('This user has no active bank connection to verify against; connect a bank first.');
    const results = await Promise.all(user.banks.map((bank) => this.deps.verification.verify(bank.bearer, name, options)));
    const result = mergeVerifications(results);
    await this.deps.ledger.recordVerified(user.userId, verifiedBeneficiariesFrom(result, new Date(this.deps.clock()).toISOString()));
    return result;
  }

  /** The user's verified IBANs, newest verification first. */
  listForUser(userId: string): Promise<VerifiedBeneficiaryRecord[]> {
    return this.deps.ledger.listForUser(userId);
  }

  /**
   * The user's verification of `iban` (electronic format), if any; `executor` is a transaction when the answer
   * must hold until it commits (a payout's approval).
   */
  findForUser(userId: string, iban: string, executor?: Kysely<Tables>): Promise<VerifiedBeneficiaryRecord | undefined> {
    return this.deps.ledger.findForUser(userId, iban, executor);
  }

  /** Every user's verification of `iban` (electronic format), newest first; empty when nobody verified it. */
  holdersOf(iban: string): Promise<IbanHolderRecord[]> {
    return this.deps.ledger.holdersOf(iban);
  }
}
