import type { PaymentsClient } from '../platform/provider/payments.client';
import type { ProviderRefund } from '../platform/provider/provider-types';
import type { Logger } from '../platform/observability/logger';
import { DataTaskStatus } from '../data-tasks/data-task-status.enum';
import { hashTaskToken, isFinalDataTaskStatus, type DataTaskStore } from '../data-tasks/data-task.store';
import type { EventInbox } from './event-inbox';
import { isUuid } from '../platform/validation/text-rules';
import type { EventBus } from '../platform/live/event-bus';
import { toDataTaskSnapshot } from '../data-tasks/data-task.snapshot';
import { topics } from '../platform/live/topics';
import type { WebhookHandlers, WebhookOutcome } from './webhook.receiver';

/** What refundUpdated subscribers receive: the refund as the provider reports it after the event. */
export interface RefundEvent {
  paymentId: string;
  refund: ProviderRefund;
}

export const REFUND_EVENT_TYPES = new Set(['refund_executed', 'refund_failed']);

/**
 * The async data notification's `status`. The spec shows only `succeeded`; the others are the words a provider
 * would plausibly use, so a failed task shows as FAILED rather than hanging in QUEUED.
 */
const DATA_STATUSES: Readonly<Record<string, DataTaskStatus>> = {
  queued: DataTaskStatus.QUEUED,
  running: DataTaskStatus.RUNNING,
  processing: DataTaskStatus.RUNNING,
  in_progress: DataTaskStatus.RUNNING,
  succeeded: DataTaskStatus.SUCCEEDED,
  failed: DataTaskStatus.FAILED,
  error: DataTaskStatus.FAILED,
  cancelled: DataTaskStatus.FAILED,
  canceled: DataTaskStatus.FAILED,
  expired: DataTaskStatus.FAILED,
};

/** A per-task webhook token as startDataTask makes them: 32 random bytes, base64url. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

const MAX_ID_LENGTH = 200;

export interface WebhookHandlerDeps {
  inbox: EventInbox;
  dataTasks: DataTaskStore;
  bus: EventBus;
  payments: PaymentsClient;
  logger: Logger;
  now?: () => Date;
}

export function createWebhookHandlers(deps: WebhookHandlerDeps): WebhookHandlers {
  const now = deps.now ?? (() => new Date());

  return {
    /**
     * Refund events. The event carries ids, not the refund, so after acknowledging it the refund is read back
     * (GET, signed) and that is what is published: subscribers always see the provider's whole current refund.
     */
    async payments(body, requestId): Promise<WebhookOutcome> {
      const type = body.type;
      if (typeof type !== 'string' || type === '') return invalid('type is missing');
      if (!REFUND_EVENT_TYPES.has(type)) {
        deps.logger.info({ requestId, type, eventId: body.event_id }, 'webhook of an unknown type ignored');
        return { status: 202, result: 'ignored' };
      }
      const eventId = body.event_id;
      if (typeof eventId !== 'string' || eventId === '' || eventId.length > MAX_ID_LENGTH) return invalid('event_id must be a non-empty string');
      const { payment_id: paymentId, refund_id: refundId } = body;
      if (typeof paymentId !== 'string' || !isUuid(paymentId)) return invalid('payment_id must be a UUID');
      if (typeof refundId !== 'string' || !isUuid(refundId)) return invalid('refund_id must be a UUID');

      const claimed = await deps.inbox.claim({ source: 'payments', eventId, type, receivedAt: now().toISOString(), body });
      if (!claimed) return { status: 200, result: 'duplicate' };
      return {
        status: 200,
        result: 'accepted',
        after: async () => {
          const refund = await deps.payments.getRefund(paymentId, refundId, { requestId });
          const event: RefundEvent = { paymentId: paymentId.toLowerCase(), refund };
          await deps.bus.publish(topics.refund(event.paymentId), event);
        },
      };
    },

    /**
     * Async data notifications. The token in the path identifies the request it was issued for; the state is
     * recorded before answering (so a restart loses nothing), deduplicated by task id and status, then published.
     */
    async data(token, body, requestId): Promise<WebhookOutcome> {
      if (!TOKEN_SHAPE.test(token)) return unknownToken();
      const request = await deps.dataTasks.requestByTokenHash(hashTaskToken(token));
      if (!request) return unknownToken();
      const { task_id: rawTaskId, status: providerStatus } = body;
      if (typeof rawTaskId !== 'string' || rawTaskId === '' || rawTaskId.length > MAX_ID_LENGTH || /[\s/]/.test(rawTaskId)) {
        return invalid('task_id must be the task id');
      }
      if (typeof providerStatus !== 'string' || providerStatus === '') return invalid('status is missing');
      const status = DATA_STATUSES[providerStatus.toLowerCase()];
      if (status === undefined) {
        deps.logger.info({ requestId, taskId: rawTaskId, providerStatus }, 'data notification with an unknown status ignored');
        return { status: 202, result: 'ignored' };
      }
      const taskId = rawTaskId.toLowerCase();
      if (request.taskId !== undefined && request.taskId !== taskId) {
        // A retried start can create a second task for one request; both are the same user's, so both are kept.
        deps.logger.warn({ requestId, taskId, boundTaskId: request.taskId }, 'data notification for another task of the same request');
      }
      const at = now().toISOString();
      await deps.dataTasks.bindTask(taskId, request);
      await deps.dataTasks.recordState({ taskId, status, providerStatus, completedAt: isFinalDataTaskStatus(status) ? at : null, updatedAt: at });
      const claimed = await deps.inbox.claim({ source: 'data', eventId: `${taskId}:${status}`, type: providerStatus, receivedAt: at, body });
      if (!claimed) return { status: 200, result: 'duplicate' };
      return {
        status: 200,
        result: 'accepted',
        after: async () => {
          const task = await deps.dataTasks.find(taskId);
          if (task) await deps.bus.publish(topics.dataTask(taskId), toDataTaskSnapshot(task));
        },
      };
    },
  };
}

function invalid(message: string): WebhookOutcome {
  return { status: 400, code: 'BAD_USER_INPUT', message: `Malformed webhook: ${message}.` };
}

function unknownToken(): WebhookOutcome {
  return { status: 404, code: 'NOT_FOUND', message: 'No data task is waiting for a notification at this address.' };
}
