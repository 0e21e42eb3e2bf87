import { lifecycle, type StatusOf } from '../platform/lifecycle/lifecycle';

/**
 * The data-task domain's own words. Plain strings, so the service, the store and the webhook handler need nothing
 * of GraphQL; the schema's enums (data-resource.enum.ts, data-task-status.enum.ts) have exactly these values.
 */
export type DataResource = 'ACCOUNTS' | 'ACCOUNT_TRANSACTIONS' | 'ACCOUNT_BALANCE' | 'CARDS' | 'CARD_TRANSACTIONS' | 'CARD_BALANCE';

/** How far along a task is, by stage: SUCCEEDED and FAILED are its ends. */
export const dataTaskLifecycle = lifecycle([['QUEUED'], ['RUNNING'], ['SUCCEEDED', 'FAILED']]);

export type DataTaskStatus = StatusOf<typeof dataTaskLifecycle>;

/** Where the provider posts a task's notifications: this prefix, then the task's webhook secret. */
export const DATA_TASK_WEBHOOK_PREFIX = '/webhooks/data/';
