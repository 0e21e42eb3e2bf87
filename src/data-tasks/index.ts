/*
 * Data tasks: async data fetches started through a user's bank connection, completed by the provider's webhook
 * (or by the data-task pass when it never comes), their results read once and kept a day.
 */
import type { Database } from '../platform/db/database';
import type { EventBus } from '../platform/live/event-bus';
import { topics } from '../platform/live/topics';
import type { Logger } from '../platform/observability/logger';
import type { DataClient } from '../platform/provider/data.client';
import type { BearerAuth } from '../platform/provider/http.client';
import type { PassJob } from '../platform/scheduler/scheduler';
import type { WebhookRoute } from '../webhooks';
import { dataTaskPass } from './data-task.job';
import { DATA_TASK_WEBHOOK_PREFIX } from './data-task.model';
import { DataTaskService, type DataTaskSettings } from './data-task.service';
import { DataTaskStore } from './data-task.store';
import { dataTaskStream } from './data-task.stream';
import { dataTaskWebhookHandler } from './data-task.webhook';

export { DataTaskService, type DataTaskEvents, type DataTaskRepair, type DataTaskServiceDeps, type DataTaskSettings } from './data-task.service';
export { type DataTaskSnapshot } from './data-task.snapshot';
export { forgetDataTasksOnRevocation } from './data-task.revocations';
export { DataTaskResolver } from './data-task.resolver';
export { DataTask } from './data-task.type';
export { StartDataTaskInput } from './start-data-task.input';
export { dataTaskNodeType } from './data-task-node.resolver';

export interface DataTasksDeps {
  data: DataClient;
  /** The relational store: tasks and their results. */
  database: Database;
  /** Where dataTaskUpdated's events are published and heard. */
  bus: EventBus;
  /** Epoch ms. */
  clock: () => number;
  logger: Logger;
  settings: DataTaskSettings;
  /** Where the provider reaches this gateway, read at each start. */
  publicUrl(): string;
  /** The bank token of an active connection outside a request (a task whose webhook never came). */
  connectionBearer(connectionId: string): Promise<BearerAuth | undefined>;
}

/** The data-task feature's parts: its service, its subscription's stream, its webhook route and its pass. */
export interface DataTasks {
  service: DataTaskService;
  /** dataTaskUpdated's stream. */
  stream: ReturnType<typeof dataTaskStream>;
  /** The provider's data notifications. */
  webhookRoute: WebhookRoute;
  /** Its periodic passes, for the scheduler. */
  passes: PassJob[];
}

export function createDataTasks(deps: DataTasksDeps): DataTasks {
  const { bus, logger } = deps;
  const service = new DataTaskService({
    data: deps.data,
    store: new DataTaskStore(deps.database, deps.clock),
    events: { publish: (snapshot) => bus.publish(topics.dataTask(snapshot.id), snapshot) },
    clock: deps.clock,
    logger,
    settings: deps.settings,
    publicUrl: deps.publicUrl,
    connectionBearer: (connectionId) => deps.connectionBearer(connectionId),
  });
  return {
    service,
    stream: dataTaskStream({ dataTasks: service, bus }),
    webhookRoute: { source: 'data', path: DATA_TASK_WEBHOOK_PREFIX, prefix: true, handler: dataTaskWebhookHandler(service, logger) },
    passes: [dataTaskPass(service)],
  };
}
