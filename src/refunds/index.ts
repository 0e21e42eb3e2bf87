export { refundWebhookHandlers, type RefundEvent, type RefundWebhookDeps } from './refund.webhook';
