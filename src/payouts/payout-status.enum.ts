import { registerEnumType } from 'type-graphql';
import { payoutStateOf, type PayoutState } from './payout-status';

// Values equal the names, as RefundStatus's, and are exactly the domain's PayoutState; the lower-case words of
// `Payout.status` map onto them in one place (payout-status.ts).
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
} as const satisfies { [K in PayoutState]: K };
export type PayoutStatus = PayoutState;

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

/** Payout.state from Payout.status: the one mapping of the word to the enum (payout-status.ts). */
export const toPayoutStatus: (word: string) => PayoutStatus = payoutStateOf;
