/** The refunds module (refunds and payments): what the rest of the gateway may use of it. */
export { RefundService, type RefundEvents, type RefundServiceDeps } from './refund.service';
export { RefundKeyStore } from './refund-key.store';
export { reconcileRefundAttempts, type RefundAttemptsPassDeps, type RefundPassRun } from './refund-attempts.pass';
export { RefundWatchers } from './refund-watcher';
export type { PaymentRecord, RefundEvent, RefundRecord, RefundStatus } from './refund.model';
export { RefundResolver } from './refund.resolver';
export { PaymentResolver } from './payment.resolver';
export { Refund } from './refund.type';
export { Payment } from './payment.type';
export { paymentNodeTypes } from './payment-node.resolver';
export { RefundPaymentInput } from './refund-payment.input';
export { refundWebhookHandlers, type RefundWebhookDeps } from './refund.webhook';
export { refundAttemptsPass } from './refund-attempts.job';
export { REFUND_STREAM_SOURCES } from './refund.stream';
