/** Refund statuses: the spec names pending, executed and failed; authorized is TrueLayer's step in between. */
export type RefundStatus = 'pending' | 'authorized' | 'executed' | 'failed';

/** Only failure_reason the spec names: the payment being refunded failed. */
export type RefundFailureReason = 'payment_failed';

/**
 * The refund object exactly as the spec lists its fields. Timestamps and failure_reason are absent until set
 * (rather than null), as TrueLayer's v3 API does (docs/provider-choices.md, Refunds and payments).
 */
export interface RefundView {
  id: string;
  amount_in_minor: number;
  currency: string;
  status: RefundStatus;
  reference: string;
  created_at: string;
  authorized_at?: string;
  executed_at?: string;
  failure_reason?: RefundFailureReason;
}

/** What the sandbox keeps about a refund: the object it shows, and what only it needs. */
export interface RefundRecord extends RefundView {
  paymentId: string;
  /** Not a field of the refund object; the refund_failed webhook reports it. */
  failed_at?: string;
  /** Creation order, which breaks ties within one payment's refunds. */
  seq: number;
}

export function refundView(refund: RefundRecord): RefundView {
  return {
    id: refund.id,
    amount_in_minor: refund.amount_in_minor,
    currency: refund.currency,
    status: refund.status,
    reference: refund.reference,
    created_at: refund.created_at,
    ...(refund.authorized_at === undefined ? {} : { authorized_at: refund.authorized_at }),
    ...(refund.executed_at === undefined ? {} : { executed_at: refund.executed_at }),
    ...(refund.failure_reason === undefined ? {} : { failure_reason: refund.failure_reason }),
  };
}
