import { Payment } from './payment.type';
import type { PaymentRecord, RefundRecord } from './refund.model';
import { Refund } from './refund.type';

export function toRefund(record: RefundRecord): Refund {
  return Object.assign(new Refund(), record);
}

export function toPayment(record: PaymentRecord): Payment {
  return Object.assign(new Payment(), { id: record.id, refunds: record.refunds.map(toRefund), refundedAmountInMinor: record.refundedAmountInMinor });
}
