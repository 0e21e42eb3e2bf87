import { lifecycle, type StatusOf } from '../platform/lifecycle/lifecycle';

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

/**
 * Every status word a payout carries (the gateway's and the provider's, lower case as `Payout.status` and the ledger
 * hold them), by stage: not sent, authorised, under way, final. The provider's set is open: a word the gateway does
 * not know ranks with submitted, so it is neither lost nor final.
 */
export const payoutLifecycle = lifecycle(
  [[PENDING_SUBMISSION, AWAITING_APPROVAL], ['authorised'], ['submitted'], ['settled', 'rejected', 'failed', DECLINED, EXPIRED, CONFLICT]],
  { othersRankWith: 'submitted' },
);

/** A status word as the schema's PayoutStatus spells it: upper case, hyphens as underscores. */
type StateName<W extends string> = W extends `${infer Head}-${infer Tail}` ? `${Uppercase<Head>}_${StateName<Tail>}` : Uppercase<W>;

/** A payout's status as one word of the schema's PayoutStatus; UNKNOWN for a word the gateway does not know. */
export type PayoutState = StateName<StatusOf<typeof payoutLifecycle>> | 'UNKNOWN';

/** Payouts that moved no money: they do not count toward the caps or the approval total (a conflict may have, so it counts). */
export const UNPAID_STATUSES: readonly string[] = ['rejected', 'failed', DECLINED, EXPIRED];

/** Payout.state from Payout.status: the one mapping of the word to the enum. */
export function payoutStateOf(word: string): PayoutState {
  return payoutLifecycle.knows(word) ? (word.toUpperCase().replaceAll('-', '_') as PayoutState) : 'UNKNOWN';
}
