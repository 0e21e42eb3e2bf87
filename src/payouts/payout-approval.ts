import type { Kysely } from 'kysely';
import type { Tables } from '../platform/db/tables';
import { BeneficiaryNotVerifiedError, ForbiddenError, PayoutLimitExceededError, type PayoutLimit } from '../platform/errors/gateway-errors';
import { sameHolderName } from '../beneficiaries';
import type { PayoutRecord } from './payout.store';
import { assertWithinLimits, type PayoutLimits, type PayoutTotals } from './payout-policy';

/** Who verified which IBAN under which holder name (the beneficiaries module), as payouts read it. */
export interface VerifiedBeneficiaries {
  findForUser(userId: string, iban: string, executor?: Kysely<Tables>): Promise<{ name: string } | undefined>;
  holdersOf(iban: string): Promise<readonly { name: string }[]>;
}

/** `extensions.reason` of the FORBIDDEN that refuses to approve a revoked user's payout. */
export const OWNER_REVOKED_REASON = 'PAYOUT_OWNER_REVOKED';

/** What approval re-reads of a user's payout in the approving transaction; undefined for a merchant key's. */
export interface ApprovalFacts {
  revoked: boolean;
  verified: { name: string } | undefined;
  totals: PayoutTotals;
}

/**
 * What approvePayout re-checks before a payout that waited is sent: days may have passed since it was recorded. Its
 * owner must not have been revoked since, the beneficiary must still be verified by that owner under the same
 * holder name, and every limit must still hold with this payout counted as sent now (the 24-hour windows moved,
 * other payouts were made). Throws to refuse; a refusal changes nothing: the payout keeps waiting, to be declined,
 * approved once it fits, or expired.
 */
export function assertApprovable(policy: PayoutLimits, record: PayoutRecord, facts: ApprovalFacts | undefined): void {
  const { owner, request, transactionId } = record;
  if (owner.kind === 'user' && facts) {
    if (facts.revoked) {
      throw new ForbiddenError(
        `Payout ${transactionId} belongs to user ${owner.userId}, who has been revoked since it was requested; a revoked user's payouts are never sent. Decline it.`,
        { reason: OWNER_REVOKED_REASON },
      );
    }
    if (!facts.verified || !sameHolderName(facts.verified.name, request.beneficiaryName)) {
      throw new BeneficiaryNotVerifiedError(
        `Payout ${transactionId} is to IBAN ${request.beneficiaryIban} as "${request.beneficiaryName}", which its user no longer has verified under that name. ` +
          'It cannot be approved; decline it, or have the user verify the account again.',
      );
    }
  }
  try {
    assertWithinLimits(policy, request, facts?.totals);
  } catch (error) {
    if (!(error instanceof PayoutLimitExceededError)) throw error;
    throw new PayoutLimitExceededError(
      `Payout ${transactionId} no longer fits the payout policy: ${error.message} It keeps waiting: approve it once it fits, or decline it.`,
      error.extensions.limit as PayoutLimit,
      error.extensions.remainingInMinor as number,
    );
  }
}
