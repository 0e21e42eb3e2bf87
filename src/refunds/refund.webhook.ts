import type { PaymentsClient } from '../platform/provider/payments.client';
import { isUuid } from '../platform/validation/text-rules';
import { malformedWebhook, type ProviderEventHandler } from '../webhooks';

import type { RefundEvent } from './refund.model';

export interface RefundWebhookDeps {
  payments: PaymentsClient;
  /** Announces the refund to the payment's refundUpdated subscribers. */
  publish(event: RefundEvent): Promise<void>;
}

/**
 * Refund events, by type. The event carries ids, not the refund, so after acknowledging it the refund is read back
 * (GET, signed) and that is what is published: subscribers always see the provider's whole current refund.
 */
export function refundWebhookHandlers(deps: RefundWebhookDeps): Record<'refund_executed' | 'refund_failed', ProviderEventHandler> {
  const handler: ProviderEventHandler = async (event) => {
    const { payment_id: paymentId, refund_id: refundId } = event.body;
    if (typeof paymentId !== 'string' || !isUuid(paymentId)) return malformedWebhook('payment_id must be a UUID');
    if (typeof refundId !== 'string' || !isUuid(refundId)) return malformedWebhook('refund_id must be a UUID');
    return {
      event: { id: event.eventId, type: event.type },
      after: async () => {
        const refund = await deps.payments.getRefund(paymentId, refundId, { requestId: event.requestId });
        await deps.publish({ paymentId: paymentId.toLowerCase(), refund });
      },
    };
  };
  return { refund_executed: handler, refund_failed: handler };
}
