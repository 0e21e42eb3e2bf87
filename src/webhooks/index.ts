/*
 * Webhooks: receipt, signature verification, the inbox and dispatch. Knows no feature: features hand their routes
 * and handlers to the composition root, which gives them to createWebhookReceiver.
 */
export { createWebhookReceiver, type WebhookSettings, type WebhookSetup } from './webhook.setup';
export {
  WebhookReceiver,
  type WebhookDecision,
  type WebhookDelivery,
  type WebhookHandler,
  type WebhookRefusal,
  type WebhookRoute,
  type WebhookStats,
} from './webhook.receiver';
export { PAYMENTS_WEBHOOK_PATH, dispatchByEventType, malformedWebhook, type ProviderEvent, type ProviderEventHandler } from './event-dispatch';
