import type { Kysely, Transaction } from 'kysely';
import type { Tables } from '../platform/db/tables';
import { BeneficiaryNotVerifiedError, ForbiddenError, PayoutLimitExceededError, type PayoutLimit } from '../platform/errors/gateway-errors';
import { sameHolderName } from '../beneficiaries';
import type { ApprovalCheck } from './payout.store';
import { assertWithinLimits, type PayoutLimits } from './payout-policy';

/** Who verified which IBAN under which holder name (the beneficiaries module), as payouts read it. */
export interface VerifiedBeneficiaries {
  findForUser(userId: string, iban: string, executor?: Kysely<Tables>): Promise<{ name: string } | undefined>;
  holdersOf(iban: string): Promise<readonly { name: string }[]>;
}

/** `extensions.reason` of the FORBIDDEN that refuses to approve a revoked user's payout. */
export const OWNER_REVOKED_REASON = 'PAYOUT_OWNER_REVOKED';

/**
 * What approvePayout re-checks, in the approving transaction, before a payout that waited is sent: days may have
 * passed since it was recorded. Its owner must not have been revoked since, the beneficiary must still be verified
 * by that owner under the same holder name, and every limit must still hold with this payout counted as sent now
 * (the 24-hour windows moved, other payouts were made). A refusal changes nothing: the payout keeps waiting, to be
 * declined, approved once it fits, or expired.
 */
export function approvalCheck(policy: PayoutLimits, beneficiaries: VerifiedBeneficiaries): ApprovalCheck {
  return async (trx, record, now) => {
    const { owner, request, transactionId } = record;
    if (owner.kind === 'user') {
      if (await isRevoked(trx, owner.userId)) {
        throw new ForbiddenError(
          `Payout ${transactionId} belongs to user ${owner.userId}, who has been revoked since it was requested; a revoked user's payouts are never sent. Decline it.`,
          { reason: OWNER_REVOKED_REASON },
        );
      }
      const verified = await beneficiaries.findForUser(owner.userId, request.beneficiaryIban, trx);
      if (!verified || !sameHolderName(verified.name, request.beneficiaryName)) {
        throw new BeneficiaryNotVerifiedError(
          `Payout ${transactionId} is to IBAN ${request.beneficiaryIban} as "${request.beneficiaryName}", which its user no longer has verified under that name. ` +
            'It cannot be approved; decline it, or have the user verify the account again.',
        );
      }
    }
    try {
      await assertWithinLimits(trx, policy, owner, request, now, transactionId);
    } catch (error) {
      if (!(error instanceof PayoutLimitExceededError)) throw error;
      throw new PayoutLimitExceededError(
        `Payout ${transactionId} no longer fits the payout policy: ${error.message} It keeps waiting: approve it once it fits, or decline it.`,
        error.extensions.limit as PayoutLimit,
        error.extensions.remainingInMinor as number,
      );
    }
  };
}

/** A user revoked with revokeUser (or no longer known) may not be paid. */
async function isRevoked(trx: Transaction<Tables>, userId: string): Promise<boolean> {
  const user = await trx.selectFrom('users').select('revokedAtMs').where('id', '=', userId).executeTakeFirst();
  return !user || user.revokedAtMs !== null;
}
