import type { Transaction } from 'kysely';
import type { MoneyConfig } from '../platform/config/config';
import type { Tables } from '../platform/db/tables';
import { PayoutLimitExceededError } from '../platform/errors/gateway-errors';
import { PayoutStore, type Admission } from './payout.store';
import type { PayoutOwner, PayoutRequest } from './payout.model';
import { AWAITING_APPROVAL, PENDING_SUBMISSION } from './payout-status';

export type PayoutLimits = Pick<MoneyConfig, 'payoutMaxMinor' | 'payoutDailyMaxMinor' | 'payoutBeneficiaryDailyMaxMinor' | 'payoutApprovalAboveMinor'>;

/**
 * The payout policy (docs/money.md), as the admission check the ledger runs in the transaction that records the
 * payout: the sums it reads and the row it inserts commit together or not at all, under the owner's and the
 * IBAN's locks, so parallel payouts on any number of instances cannot together pass a limit that only one fits.
 * - PAYOUT_MAX_MINOR caps every single payout, whoever makes it.
 * - PAYOUT_DAILY_MAX_MINOR caps a user's payouts per currency over a rolling 24 h.
 * - PAYOUT_BENEFICIARY_DAILY_MAX_MINOR caps every user's payouts together to one IBAN per currency over a rolling
 *   24 h: one bank account can be attached to any number of app users, and each has a daily cap of its own.
 * - A user's payout that takes their rolling 24 h total above PAYOUT_APPROVAL_ABOVE_MINOR waits for a merchant
 *   key's approval, so splitting an amount into payouts at the threshold does not avoid it.
 * A merchant key is the merchant itself: its payouts need no approval, have no daily cap beyond its own judgement,
 * and do not count toward its users' caps.
 * - A payout an agent proposes (`alwaysApprove`) passes every limit above and then always waits for approval,
 *   whatever its amount and whoever its owner: an agent never moves money on its own.
 */
export function payoutAdmission(policy: PayoutLimits, options: { alwaysApprove?: boolean } = {}): Admission {
  return async (trx: Transaction<Tables>, owner: PayoutOwner, request: PayoutRequest, now: number): Promise<string> => {
    const spent = await assertWithinLimits(trx, policy, owner, request, now);
    if (options.alwaysApprove) return AWAITING_APPROVAL;
    if (owner.kind === 'merchant') return PENDING_SUBMISSION;
    return spent + request.amountInMinor > policy.payoutApprovalAboveMinor ? AWAITING_APPROVAL : PENDING_SUBMISSION;
  };
}

/**
 * Throws PayoutLimitExceededError naming the first limit `request` does not fit (per payout, then the user's
 * daily cap, then the IBAN's), leaving out `excluding` (a payout being approved is already in the sums); else
 * answers the user's own total over the window before this payout (0 for a merchant key).
 */
export async function assertWithinLimits(
  trx: Transaction<Tables>,
  policy: PayoutLimits,
  owner: PayoutOwner,
  request: PayoutRequest,
  now: number,
  excluding?: string,
): Promise<number> {
  const { amountInMinor: amount, currency } = request;
  if (amount > policy.payoutMaxMinor) {
    throw new PayoutLimitExceededError(
      `amountInMinor ${amount} is above the largest single payout, ${policy.payoutMaxMinor} ${currency} minor units. Pay out at most that much at a time.`,
      'per-payout',
      policy.payoutMaxMinor,
    );
  }
  if (owner.kind === 'merchant') return 0;
  const spent = await PayoutStore.dailyTotal(trx, owner, currency, now, excluding);
  const remaining = Math.max(0, policy.payoutDailyMaxMinor - spent);
  if (amount > remaining) {
    throw new PayoutLimitExceededError(
      `amountInMinor ${amount} is above what this user may still pay out in ${currency} over the last 24 hours ` +
        `(${remaining} of ${policy.payoutDailyMaxMinor} minor units). Wait until earlier payouts leave the 24-hour window, or pay out less.`,
      'user-daily',
      remaining,
    );
  }
  const toIban = await PayoutStore.beneficiaryTotal(trx, request.beneficiaryIban, currency, now, excluding);
  const ibanRemaining = Math.max(0, policy.payoutBeneficiaryDailyMaxMinor - toIban);
  if (amount > ibanRemaining) {
    throw new PayoutLimitExceededError(
      `amountInMinor ${amount} is above what may still be paid out to IBAN ${request.beneficiaryIban} in ${currency} over the last 24 hours, ` +
        `counting every user's payouts to it (${ibanRemaining} of ${policy.payoutBeneficiaryDailyMaxMinor} minor units). ` +
        'Wait until earlier payouts leave the 24-hour window, or pay out less.',
      'beneficiary-daily',
      ibanRemaining,
    );
  }
  return spent;
}
