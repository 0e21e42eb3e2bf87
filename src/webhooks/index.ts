/*
 * Webhooks: receipt, signature verification, the inbox and dispatch. Knows no feature: features hand their routes
 * and handlers to the composition root, which gives them to createWebhookReceiver.
 */
export { createWebhookReceiver, DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings, type WebhookSetup } from './webhook.setup';
export {
  MAX_WEBHOOK_BODY_BYTES,
  WebhookReceiver,
  type WebhookDecision,
  type WebhookDelivery,
  type WebhookHandler,
  type WebhookRefusal,
  type WebhookRoute,
  type WebhookStats,
} from './webhook.receiver';
export { PAYMENTS_WEBHOOK_PATH, dispatchByEventType, malformedWebhook, type ProviderEvent, type ProviderEventHandler } from './event-dispatch';
export { EventInbox, INBOX_TTL_MS, type InboxEntry } from './event-inbox';
export { JwksKeyCache, JwksUnavailableError, parseJwks } from './jwks-cache';
export { WebhookVerifier, type ReceivedWebhook, type WebhookVerdict } from './webhook-verifier';
