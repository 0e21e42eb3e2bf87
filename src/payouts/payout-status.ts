/** Statuses the gateway gives a payout before or instead of the provider's (README, Withdrawals, for the rest). */
export const PENDING_SUBMISSION = 'pending-submission';
export const AWAITING_APPROVAL = 'awaiting-approval';
export const DECLINED = 'declined';
export const EXPIRED = 'expired';
/**
 * Sent with an uncertain outcome, then read back from the provider with other fields than the request: the provider
 * may have paid, so it is kept, counted in every cap, and never sent again; an operator settles it (docs/money.md).
 */
export const CONFLICT = 'conflict';

/** Nothing changes after these: the provider's final stages, and the gateway's own ends. */
export const FINAL_PAYOUT_STATUSES: ReadonlySet<string> = new Set(['settled', 'rejected', 'failed', DECLINED, EXPIRED, CONFLICT]);

/** Payouts that moved no money: they do not count toward the caps or the approval total (a conflict may have, so it counts). */
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
  [CONFLICT]: 3,
};

/** How far along a payout is; an unknown status ranks with submitted, so it is neither lost nor final. */
export function payoutRank(status: string): number {
  return STAGE_RANK[status] ?? 2;
}
