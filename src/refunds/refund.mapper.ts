import { Payment } from './payment.type';
import type { PaymentRecord, RefundRecord } from './refund.model';
import { Refund } from './refund.type';

export function toRefund(record: RefundRecord): Refund {
  const { id, ...rest } = record;
  return Object.assign(new Refund(), { ...rest, refundId: id });
}

export function toPayment(record: PaymentRecord): Payment {
  return Object.assign(new Payment(), { paymentId: record.id, refunds: record.refunds.map(toRefund), refundedAmountInMinor: record.refundedAmountInMinor });
}
