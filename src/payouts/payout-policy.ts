import type { MoneyConfig } from '../platform/config/config';
import { PayoutLimitExceededError } from '../platform/errors/gateway-errors';
import type { PayoutOwner, PayoutRequest } from './payout.model';
import { AWAITING_APPROVAL, PENDING_SUBMISSION } from './payout-status';

export type PayoutLimits = Pick<MoneyConfig, 'payoutMaxMinor' | 'payoutDailyMaxMinor' | 'payoutBeneficiaryDailyMaxMinor' | 'payoutApprovalAboveMinor'>;

/** A user's 24-hour sums before a payout, in its currency: their own payouts, and every user's to its IBAN. */
export interface PayoutTotals {
  user: number;
  beneficiary: number;
}

/**
 * The payout policy (docs/money.md), decided on the sums read in the transaction that records the payout
 * (payout-transactions.ts): what it reads and the row it inserts commit together or not at all, under the owner's
 * and the IBAN's locks, so parallel payouts on any number of instances cannot together pass a limit only one fits.
 * - PAYOUT_MAX_MINOR caps every single payout, whoever makes it.
 * - PAYOUT_DAILY_MAX_MINOR caps a user's payouts per currency over a rolling 24 h.
 * - PAYOUT_BENEFICIARY_DAILY_MAX_MINOR caps every user's payouts together to one IBAN per currency over a rolling
 *   24 h: one bank account can be attached to any number of app users, and each has a daily cap of its own.
 * - A user's payout that takes their rolling 24 h total above PAYOUT_APPROVAL_ABOVE_MINOR waits for a merchant
 *   key's approval, so splitting an amount into payouts at the threshold does not avoid it.
 * A merchant key is the merchant itself: its payouts need no approval, have no daily cap beyond its own judgement,
 * and do not count toward its users' caps (its `totals` are not read).
 * - A payout an agent proposes (`alwaysApprove`) passes every limit above and then always waits for approval,
 *   whatever its amount and whoever its owner: an agent never moves money on its own.
 * Answers the new payout's status, or throws PayoutLimitExceededError.
 */
export function admissionStatus(
  policy: PayoutLimits,
  owner: PayoutOwner,
  request: PayoutRequest,
  totals: PayoutTotals | undefined,
  options: { alwaysApprove?: boolean } = {},
): string {
  assertWithinLimits(policy, request, totals);
  if (options.alwaysApprove) return AWAITING_APPROVAL;
  if (owner.kind === 'merchant' || !totals) return PENDING_SUBMISSION;
  return totals.user + request.amountInMinor > policy.payoutApprovalAboveMinor ? AWAITING_APPROVAL : PENDING_SUBMISSION;
}

/**
 * Throws PayoutLimitExceededError naming the first limit `request` does not fit: per payout, then (for a user, whose
 * `totals` are given) the user's daily cap, then the IBAN's.
 */
export function assertWithinLimits(policy: PayoutLimits, request: PayoutRequest, totals: PayoutTotals | undefined): void {
  const { amountInMinor: amount, currency } = request;
  if (amount > policy.payoutMaxMinor) {
    throw new PayoutLimitExceededError(
      `amountInMinor ${amount} is above the largest single payout, ${policy.payoutMaxMinor} ${currency} minor units. Pay out at most that much at a time.`,
      'per-payout',
      policy.payoutMaxMinor,
    );
  }
  if (!totals) return;
  const remaining = Math.max(0, policy.payoutDailyMaxMinor - totals.user);
  if (amount > remaining) {
    throw new PayoutLimitExceededError(
      `amountInMinor ${amount} is above what this user may still pay out in ${currency} over the last 24 hours ` +
        `(${remaining} of ${policy.payoutDailyMaxMinor} minor units). Wait until earlier payouts leave the 24-hour window, or pay out less.`,
      'user-daily',
      remaining,
    );
  }
  const ibanRemaining = Math.max(0, policy.payoutBeneficiaryDailyMaxMinor - totals.beneficiary);
  if (amount > ibanRemaining) {
    throw new PayoutLimitExceededError(
      `amountInMinor ${amount} is above what may still be paid out to IBAN ${request.beneficiaryIban} in ${currency} over the last 24 hours, ` +
        `counting every user's payouts to it (${ibanRemaining} of ${policy.payoutBeneficiaryDailyMaxMinor} minor units). ` +
        'Wait until earlier payouts leave the 24-hour window, or pay out less.',
      'beneficiary-daily',
      ibanRemaining,
    );
  }
}
