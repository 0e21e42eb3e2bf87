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

/** A payout's status as one word of the schema's PayoutStatus; UNKNOWN for a word the gateway does not know. */
export type PayoutState =
  'PENDING_SUBMISSION' | 'AWAITING_APPROVAL' | 'AUTHORISED' | 'SUBMITTED' | 'SETTLED' | 'REJECTED' | 'FAILED' | 'DECLINED' | 'EXPIRED' | 'CONFLICT' | 'UNKNOWN';

/**
 * Every status word a payout carries (the gateway's and the provider's, lower case as `Payout.status` and the ledger
 * hold them): its state, and how far along it is (0 not sent, 1 authorised, 2 under way, 3 final).
 */
const STATUSES: Readonly<Record<string, { state: PayoutState; rank: number }>> = {
  [PENDING_SUBMISSION]: { state: 'PENDING_SUBMISSION', rank: 0 },
  [AWAITING_APPROVAL]: { state: 'AWAITING_APPROVAL', rank: 0 },
  authorised: { state: 'AUTHORISED', rank: 1 },
  submitted: { state: 'SUBMITTED', rank: 2 },
  settled: { state: 'SETTLED', rank: 3 },
  rejected: { state: 'REJECTED', rank: 3 },
  failed: { state: 'FAILED', rank: 3 },
  [DECLINED]: { state: 'DECLINED', rank: 3 },
  [EXPIRED]: { state: 'EXPIRED', rank: 3 },
  [CONFLICT]: { state: 'CONFLICT', rank: 3 },
};

const FINAL_RANK = 3;

/** The provider's set is open: a word the gateway does not know ranks with submitted, so it is neither lost nor final. */
const UNKNOWN_STATUS = { state: 'UNKNOWN', rank: 2 } as const;

const statusOf = (word: string): { state: PayoutState; rank: number } => (Object.hasOwn(STATUSES, word) ? STATUSES[word]! : UNKNOWN_STATUS);

/** Nothing changes after these: the provider's final stages, and the gateway's own ends. */
export const FINAL_PAYOUT_STATUSES: ReadonlySet<string> = new Set(Object.keys(STATUSES).filter((word) => STATUSES[word]!.rank === FINAL_RANK));

/** Payouts that moved no money: they do not count toward the caps or the approval total (a conflict may have, so it counts). */
export const UNPAID_STATUSES: readonly string[] = ['rejected', 'failed', DECLINED, EXPIRED];

/** Payout.state from Payout.status: the one mapping of the word to the enum. */
export function payoutStateOf(word: string): PayoutState {
  return statusOf(word).state;
}

/** How far along a payout is. */
export function payoutRank(word: string): number {
  return statusOf(word).rank;
}
