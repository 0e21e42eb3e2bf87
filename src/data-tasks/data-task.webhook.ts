import type { Logger } from '../platform/observability/logger';
import { malformedWebhook, type WebhookHandler } from '../webhooks';
import type { DataTaskStatus } from './data-task.model';
import type { DataTaskService } from './data-task.service';

/**
 * The async data notification's `status`. The spec shows only `succeeded`; the others are the words a provider
 * would plausibly use, so a failed task shows as FAILED rather than hanging in QUEUED.
 */
const DATA_STATUSES: Readonly<Record<string, DataTaskStatus>> = {
  queued: 'QUEUED',
  running: 'RUNNING',
  processing: 'RUNNING',
  in_progress: 'RUNNING',
  succeeded: 'SUCCEEDED',
  failed: 'FAILED',
  error: 'FAILED',
  cancelled: 'FAILED',
  canceled: 'FAILED',
  expired: 'FAILED',
};

const MAX_ID_LENGTH = 200;

/**
 * Async data notifications, at DATA_TASK_WEBHOOK_PREFIX + the task's token. The token identifies the request it was
 * issued for; the state is recorded before answering (so a restart loses nothing), the event is deduplicated by
 * task id and status, then published.
 */
export function dataTaskWebhookHandler(dataTasks: DataTaskService, logger: Logger): WebhookHandler {
  return async ({ key: token, body, requestId, receivedAt }) => {
    const request = await dataTasks.requestForToken(token);
    if (!request) return { status: 404, code: 'NOT_FOUND', message: 'No data task is waiting for a notification at this address.' };
    const { task_id: rawTaskId, status: providerStatus } = body;
    if (typeof rawTaskId !== 'string' || rawTaskId === '' || rawTaskId.length > MAX_ID_LENGTH || /[\s/]/.test(rawTaskId)) {
      return malformedWebhook('task_id must be the task id');
    }
    if (typeof providerStatus !== 'string' || providerStatus === '') return malformedWebhook('status is missing');
    const status = Object.hasOwn(DATA_STATUSES, providerStatus.toLowerCase()) ? DATA_STATUSES[providerStatus.toLowerCase()] : undefined;
    if (status === undefined) {
      logger.info({ requestId, taskId: rawTaskId, providerStatus }, 'data notification with an unknown status ignored');
      return { ignored: true };
    }
    const taskId = rawTaskId.toLowerCase();
    if (request.taskId !== undefined && request.taskId !== taskId) {
      // A retried start can create a second task for one request; both are the same user's, so both are kept.
      logger.warn({ requestId, taskId, boundTaskId: request.taskId }, 'data notification for another task of the same request');
    }
    await dataTasks.recordProviderState(request, taskId, status, providerStatus, receivedAt);
    return { event: { id: `${taskId}:${status}`, type: providerStatus }, after: () => dataTasks.publish(taskId) };
  };
}
