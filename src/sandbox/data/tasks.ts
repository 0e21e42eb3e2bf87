import { randomUUID } from 'node:crypto';
import type { SandboxContext } from '../context';

/** Sandbox seconds from acknowledgement to completion (docs/provider-choices.md, "Data API"). */
export const TASK_DURATION_SECONDS = 1;

export interface DataTask {
  id: string;
  clientId: string;
  userId: string;
  status: 'Queued' | 'succeeded';
  /** What the synchronous call would have answered when the request arrived. */
  payload: unknown;
}

export interface NewTask {
  clientId: string;
  userId: string;
  credentialsId: string;
  payload: unknown;
  requestUri: string;
  webhookUri: string;
}

/** Queued async data requests. Each completes after TASK_DURATION_SECONDS, then its webhook goes out. */
export class DataTasks {
  private readonly tasks = new Map<string, DataTask>();

  constructor(private readonly context: SandboxContext) {}

  create(request: NewTask): { task: DataTask; resultsUri: string } {
    const task: DataTask = { id: randomUUID(), clientId: request.clientId, userId: request.userId, status: 'Queued', payload: request.payload };
    this.tasks.set(task.id, task);
    const resultsUri = `${this.context.origin()}/data/v1/results/${task.id}`;
    const requestTimestamp = this.context.clock.iso();
    this.context.clock.after(TASK_DURATION_SECONDS, () => {
      task.status = 'succeeded';
      this.context.webhooks.send(request.webhookUri, {
        request_timestamp: requestTimestamp,
        request_uri: request.requestUri,
        results_uri: resultsUri,
        credentials_id: request.credentialsId,
        task_id: task.id,
        status: 'succeeded',
      });
    });
    return { task, resultsUri };
  }

  /** The task, when it exists and belongs to this client's user; another user's task is as good as unknown. */
  find(id: string, clientId: string, userId: string): DataTask | undefined {
    const task = this.tasks.get(id);
    return task && task.clientId === clientId && task.userId === userId ? task : undefined;
  }
}
