import { registerEnumType } from 'type-graphql';
import { AWAITING_APPROVAL, CONFLICT, DECLINED, EXPIRED, PENDING_SUBMISSION } from './payout-status';

// Values equal the names, as RefundStatus's; the lower-case words of `Payout.status` map onto them in one place
// (toPayoutStatus), and a word the gateway does not know is UNKNOWN, since the provider's set is open.
export const PayoutStatus = {
  PENDING_SUBMISSION: 'PENDING_SUBMISSION',
  AWAITING_APPROVAL: 'AWAITING_APPROVAL',
  AUTHORISED: 'AUTHORISED',
  SUBMITTED: 'SUBMITTED',
  SETTLED: 'SETTLED',
  REJECTED: 'REJECTED',
  FAILED: 'FAILED',
  DECLINED: 'DECLINED',
  EXPIRED: 'EXPIRED',
  CONFLICT: 'CONFLICT',
  UNKNOWN: 'UNKNOWN',
} as const;
export type PayoutStatus = (typeof PayoutStatus)[keyof typeof PayoutStatus];

registerEnumType(PayoutStatus, {
  name: 'PayoutStatus',
  description:
    'Where a payout is. SETTLED marks completion; SETTLED, REJECTED, FAILED, DECLINED, EXPIRED and CONFLICT never change; UNKNOWN is a status the provider reported that the gateway does not know (Payout.status has its word).',
  valuesConfig: {
    PENDING_SUBMISSION: { description: 'Recorded by the gateway, not yet confirmed by the provider.' },
    AWAITING_APPROVAL: { description: 'Above the approval threshold: sent only once a merchant key approves it.' },
    DECLINED: { description: 'A merchant key declined it; it was never sent.' },
    EXPIRED: { description: 'It waited for approval past the approval expiry; it was never sent.' },
    CONFLICT: { description: 'Sent with an uncertain outcome and read back differing; an operator settles it (docs/money.md).' },
  },
});

/** The lower-case words Payout.status carries, the gateway's and the provider's, by their enum value. */
const BY_WORD: Readonly<Record<string, PayoutStatus>> = {
  [PENDING_SUBMISSION]: PayoutStatus.PENDING_SUBMISSION,
  [AWAITING_APPROVAL]: PayoutStatus.AWAITING_APPROVAL,
  authorised: PayoutStatus.AUTHORISED,
  submitted: PayoutStatus.SUBMITTED,
  settled: PayoutStatus.SETTLED,
  rejected: PayoutStatus.REJECTED,
  failed: PayoutStatus.FAILED,
  [DECLINED]: PayoutStatus.DECLINED,
  [EXPIRED]: PayoutStatus.EXPIRED,
  [CONFLICT]: PayoutStatus.CONFLICT,
};

/** Payout.state from Payout.status: the one mapping of the word to the enum. */
export function toPayoutStatus(word: string): PayoutStatus {
  return Object.hasOwn(BY_WORD, word) ? BY_WORD[word] : PayoutStatus.UNKNOWN;
}
