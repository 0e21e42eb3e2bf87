/*
 * Data tasks: async data fetches started through a user's bank connection, completed by the provider's webhook
 * (or by the data-task pass when it never comes), their results read once and kept a day.
 */
export { DataTaskService, type DataTaskEvents, type DataTaskRepair, type DataTaskServiceDeps, type DataTaskSettings } from './data-task.service';
export { DataTaskStore } from './data-task.store';
export { DATA_TASK_WEBHOOK_PREFIX } from './data-task.model';
export { type DataTaskSnapshot } from './data-task.snapshot';
export { dataTaskWebhookHandler } from './data-task.webhook';
export { forgetDataTasksOnRevocation } from './data-task.revocations';
export { DataTaskResolver, DATA_TASK_STREAM_SOURCES } from './data-task.resolver';
export { DataTask } from './data-task.type';
export { StartDataTaskInput } from './start-data-task.input';
export { dataTaskPass } from './data-task.job';
export { dataTaskNodeType } from './data-task-node.resolver';
