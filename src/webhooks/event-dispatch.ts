import type { Logger } from '../platform/observability/logger';
import type { WebhookDecision, WebhookDelivery, WebhookHandler, WebhookRefusal } from './webhook.receiver';

/** Where the provider's payments API posts its events (refunds today), each naming its `type` and `event_id`. */
export const PAYMENTS_WEBHOOK_PATH = '/webhooks/payments';

const MAX_ID_LENGTH = 200;

/** A delivery of the provider's event envelope, its type and id checked. */
export interface ProviderEvent extends WebhookDelivery {
  type: string;
  eventId: string;
}

export type ProviderEventHandler = (event: ProviderEvent) => Promise<WebhookDecision>;

/**
 * The handler of a route whose deliveries are typed events: each goes to the handler registered for its `type`;
 * a type nobody registered is acknowledged and ignored (202), so the provider does not retry it.
 */
export function dispatchByEventType(handlers: Readonly<Record<string, ProviderEventHandler>>, logger: Logger): WebhookHandler {
  return async (delivery) => {
    const { type, event_id: eventId } = delivery.body;
    if (typeof type !== 'string' || type === '') return malformedWebhook('type is missing');
    const handler = Object.hasOwn(handlers, type) ? handlers[type] : undefined;
    if (!handler) {
      logger.info({ requestId: delivery.requestId, type, eventId }, 'webhook of an unknown type ignored');
      return { ignored: true };
    }
    if (typeof eventId !== 'string' || eventId === '' || eventId.length > MAX_ID_LENGTH) return malformedWebhook('event_id must be a non-empty string');
    return handler({ ...delivery, type, eventId });
  };
}

/** The answer to a delivery whose fields are not what its kind needs. */
export function malformedWebhook(message: string): WebhookRefusal {
  return { status: 400, code: 'BAD_USER_INPUT', message: `Malformed webhook: ${message}.` };
}
