import type { Transaction } from 'kysely';
import type { MoneyConfig } from '../config';
import type { ProviderWithdrawalRequest } from '../datasources/provider-types';
import type { Tables } from '../db/tables';
import { PayoutLimitExceededError } from '../errors';
import { PayoutLedger, type Admission, type PayoutOwner } from './payout-ledger';
import { AWAITING_APPROVAL, PENDING_SUBMISSION } from './payout-status';

/**
 * The payout policy (docs/money.md), as the admission check the ledger runs in the transaction that records the
 * payout: the daily sum it reads and the row it inserts commit together or not at all, so parallel payouts on any
 * number of instances cannot together pass a limit that only one of them fits.
 * - PAYOUT_MAX_MINOR caps every single payout, whoever makes it.
 * - PAYOUT_DAILY_MAX_MINOR caps a user's payouts per currency over a rolling 24 h.
 * - A user's payout above PAYOUT_APPROVAL_ABOVE_MINOR waits for a merchant key's approval. A merchant key is the
 *   merchant itself: its payouts need no approval and have no daily cap beyond its own judgement.
 */
export function payoutAdmission(policy: Pick<MoneyConfig, 'payoutMaxMinor' | 'payoutDailyMaxMinor' | 'payoutApprovalAboveMinor'>): Admission {
  return async (trx: Transaction<Tables>, owner: PayoutOwner, request: ProviderWithdrawalRequest, now: number): Promise<string> => {
    const amount = request.amount_in_minor;
    if (amount > policy.payoutMaxMinor) {
      throw new PayoutLimitExceededError(
        `amountInMinor ${amount} is above the largest single payout, ${policy.payoutMaxMinor} ${request.currency} minor units. Pay out at most that much at a time.`,
        'PAYOUT_MAX_MINOR',
        policy.payoutMaxMinor,
      );
    }
    if (owner.kind === 'merchant') return PENDING_SUBMISSION;
    const spent = await PayoutLedger.dailyTotal(trx, owner, request.currency, now);
    const remaining = Math.max(0, policy.payoutDailyMaxMinor - spent);
    if (amount > remaining) {
      throw new PayoutLimitExceededError(
        `amountInMinor ${amount} is above what this user may still pay out in ${request.currency} over the last 24 hours ` +
          `(${remaining} of ${policy.payoutDailyMaxMinor} minor units). Wait until earlier payouts leave the 24-hour window, or pay out less.`,
        'PAYOUT_DAILY_MAX_MINOR',
        remaining,
      );
    }
    return amount > policy.payoutApprovalAboveMinor ? AWAITING_APPROVAL : PENDING_SUBMISSION;
  };
}
