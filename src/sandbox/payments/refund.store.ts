import { randomUUID } from 'node:crypto';
import type { SandboxContext } from '../context';
import type { FixturePayment } from '../fixtures/types';
import { Problem } from '../http/respond';
import { REFUNDABLE_STATUSES } from './payments';
import { sendRefundExecuted, sendRefundFailed } from './refund.events';
import { RefundExecutionQueue } from './refund.queue';
import type { RefundRecord } from './refund.types';

/**
 * Refunds of the merchant's payments and their lifecycle (docs/provider-choices.md, Refunds and payments):
 * pending until the payment settles, then authorized and queued, then executed; failed if the payment fails first.
 */
export class RefundStore {
  /** By payment id, each list in creation order. */
  private readonly byPayment = new Map<string, RefundRecord[]>();
  private nextSeq = 0;
  /** For payments settled through the sandbox: their order of settlement, which breaks ties of settled_at. */
  private readonly settleOrders = new Map<string, number>();
  private readonly queue: RefundExecutionQueue;

  constructor(private readonly context: SandboxContext) {
    this.queue = new RefundExecutionQueue(context.clock, (refund, executedAtMs) => this.executed(refund, executedAtMs));
  }

  list(paymentId: string): RefundRecord[] {
    return this.byPayment.get(paymentId) ?? [];
  }

  get(paymentId: string, refundId: string): RefundRecord | undefined {
    const id = refundId.toLowerCase();
    return this.list(paymentId).find((refund) => refund.id === id);
  }

  /** The spec's constraints on a new refund; throws the 409 problems in docs/provider-choices.md. */
  assertRefundable(payment: FixturePayment, amountInMinor: number): void {
    if (!REFUNDABLE_STATUSES.includes(payment.status)) {
      throw new Problem(
        409,
        'payment-not-refundable',
        `Payment ${payment.id} is ${payment.status}; only a payment that is ${REFUNDABLE_STATUSES.join(', ')} can be refunded.`,
      );
    }
    // Failed refunds gave nothing back, so they do not use up the payment (spec, Refund states).
    const committed = this.list(payment.id)
      .filter((refund) => refund.status !== 'failed')
      .reduce((sum, refund) => sum + refund.amount_in_minor, 0);
    const left = payment.amount_in_minor - committed;
    if (amountInMinor > left) {
      throw new Problem(
        409,
        'refund-limit-exceeded',
        `A refund of ${amountInMinor} would exceed payment ${payment.id}: it is ${payment.amount_in_minor} ${payment.currency}, ` +
          `${committed} is already refunded or being refunded, so at most ${left} can still be refunded.`,
      );
    }
  }

  /** Creates a refund that passed `assertRefundable`, in the payment's currency, and records it in the ledger once. */
  create(payment: FixturePayment, amountInMinor: number, reference: string): RefundRecord {
    const nowMs = this.context.clock.nowMs();
    const refund: RefundRecord = {
      id: randomUUID(),
      paymentId: payment.id,
      amount_in_minor: amountInMinor,
      currency: payment.currency,
      status: 'pending',
      reference,
      created_at: new Date(nowMs).toISOString(),
      seq: this.nextSeq++,
    };
    const refunds = this.byPayment.get(payment.id) ?? [];
    refunds.push(refund);
    this.byPayment.set(payment.id, refunds);
    this.context.ledger.record({
      kind: 'refund',
      id: refund.id,
      paymentId: payment.id,
      amount_in_minor: refund.amount_in_minor,
      currency: refund.currency,
      created_at: refund.created_at,
    });
    if (payment.status === 'settled') this.authorize(refund, payment, nowMs);
    return refund;
  }

  /** Called once the payment has moved to settled: its pending refunds are initiated now. */
  paymentSettled(payment: FixturePayment): void {
    this.settleOrders.set(payment.id, this.settleOrders.size);
    const settledAtMs = Date.parse(payment.settled_at!);
    for (const refund of this.list(payment.id)) {
      if (refund.status === 'pending') this.authorize(refund, payment, settledAtMs);
    }
  }

  /** Called once the payment has moved to failed: its pending refunds fail with payment_failed. */
  paymentFailed(payment: FixturePayment): void {
    for (const refund of this.list(payment.id)) {
      if (refund.status !== 'pending') continue;
      refund.status = 'failed';
      refund.failure_reason = 'payment_failed';
      refund.failed_at = payment.failed_at!;
      sendRefundFailed(this.context, refund);
    }
  }

  private authorize(refund: RefundRecord, payment: FixturePayment, authorizedAtMs: number): void {
    refund.status = 'authorized';
    refund.authorized_at = new Date(authorizedAtMs).toISOString();
    // Seeded payments settled before the sandbox started (order -1); ties between them do not occur.
    this.queue.enqueue(refund, authorizedAtMs, Date.parse(payment.settled_at!), this.settleOrders.get(payment.id) ?? -1);
  }

  private executed(refund: RefundRecord, executedAtMs: number): void {
    refund.status = 'executed';
    refund.executed_at = new Date(executedAtMs).toISOString();
    sendRefundExecuted(this.context, refund);
  }
}
