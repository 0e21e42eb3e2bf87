import { randomUUID } from 'node:crypto';
import type { SandboxContext } from '../context';
import type { RefundRecord } from './refund.types';

/**
 * Refund webhooks (docs/provider-choices.md, Webhooks) to the client's payments webhook URL. Read at send time, so a URL configured
 * after a refund was created still gets its events; none are sent while it is unset.
 */
export function sendRefundExecuted(context: SandboxContext, refund: RefundRecord): void {
  send(context, {
    type: 'refund_executed',
    event_id: randomUUID(),
    event_version: 1,
    payment_id: refund.paymentId,
    refund_id: refund.id,
    executed_at: refund.executed_at,
  });
}

export function sendRefundFailed(context: SandboxContext, refund: RefundRecord): void {
  send(context, {
    type: 'refund_failed',
    event_id: randomUUID(),
    event_version: 1,
    payment_id: refund.paymentId,
    refund_id: refund.id,
    failed_at: refund.failed_at,
    failure_reason: refund.failure_reason,
  });
}

function send(context: SandboxContext, body: Record<string, unknown>): void {
  const url = context.client.paymentsWebhookUrl;
  if (url) context.webhooks.send(url, body);
}
