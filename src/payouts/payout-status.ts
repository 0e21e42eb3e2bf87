/** Statuses the gateway gives a payout before or instead of the provider's (README, Withdrawals, for the rest). */
export const PENDING_SUBMISSION = 'pending-submission';
export const AWAITING_APPROVAL = 'awaiting-approval';
export const DECLINED = 'declined';
export const EXPIRED = 'expired';

/** Nothing changes after these: the provider's final stages, and the gateway's own ends. */
export const FINAL_PAYOUT_STATUSES: ReadonlySet<string> = new Set(['settled', 'rejected', 'failed', DECLINED, EXPIRED]);

/** Payouts that moved no money: they do not count toward PAYOUT_DAILY_MAX_MINOR. */
export const UNPAID_STATUSES: readonly string[] = ['rejected', 'failed', DECLINED, EXPIRED];

const STAGE_RANK: Readonly<Record<string, number>> = {
  [AWAITING_APPROVAL]: 0,
  [PENDING_SUBMISSION]: 0,
  authorised: 1,
  submitted: 2,
  settled: 3,
  rejected: 3,
  failed: 3,
  [DECLINED]: 3,
  [EXPIRED]: 3,
};

/** How far along a payout is; an unknown status ranks with submitted, so it is neither lost nor final. */
export function payoutRank(status: string): number {
  return STAGE_RANK[status] ?? 2;
}
