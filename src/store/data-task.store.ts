import { createHash } from 'node:crypto';
import type Keyv from 'keyv';
import type { DataRequest } from '../datasources/data.client';
import type { DataResource } from '../schema/data-resource.enum';
import { DataTaskStatus } from '../schema/data-task-status.enum';
import { KeyedMutex } from './keyed-mutex';

/** A data task is a short errand: its record, state and results are kept a day after it was started. */
export const DATA_TASK_TTL_MS = 24 * 3600 * 1000;

/** What startDataTask wrote, keyed by the hash of the task's webhook secret (the store never holds the secret). */
export interface DataTaskRequestRecord {
  tokenHash: string;
  userId: string;
  /** The bank connection the task was started through; its results are fetched with the same grant. */
  connectionId: string;
  resource: DataResource;
  /** The provider call made, for fetching the results of the right kind. */
  request: DataRequest;
  createdAt: string;
  /** The provider's task id, once its acknowledgement (or the webhook, whichever came first) named it. */
  taskId?: string;
}

/** What the provider's notifications said about one task id. */
export interface DataTaskStateRecord {
  taskId: string;
  status: DataTaskStatus;
  /** The provider's own word (`succeeded`), for logs and support. */
  providerStatus: string;
  completedAt: string | null;
  updatedAt: string;
}

/** A task as the API shows it. */
export interface DataTaskRecord {
  id: string;
  userId: string;
  connectionId: string;
  resource: DataResource;
  request: DataRequest;
  status: DataTaskStatus;
  createdAt: string;
  completedAt: string | null;
}

const RANK: Record<DataTaskStatus, number> = {
  [DataTaskStatus.QUEUED]: 0,
  [DataTaskStatus.RUNNING]: 1,
  [DataTaskStatus.SUCCEEDED]: 2,
  [DataTaskStatus.FAILED]: 2,
};

export function dataTaskStatusRank(status: DataTaskStatus): number {
  return RANK[status];
}

export function isFinalDataTaskStatus(status: DataTaskStatus): boolean {
  return RANK[status] === 2;
}

export function hashTaskToken(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

type StoredValue = DataTaskRequestRecord | DataTaskStateRecord | string | unknown[];

/**
 * Async data tasks, durable (STORE_URL), so a restarted or different instance answers for them. Each key has one
 * kind of writer, so instances never overwrite each other's news (keyv has no compare-and-set):
 * - `request:<tokenHash>`: written by startDataTask (before the provider call, then with the task id);
 * - `task:<taskId>`: the token hash of the task's request, written by startDataTask and by the webhook alike
 *   (the same value), because the webhook may arrive before the acknowledgement has been handled;
 * - `state:<taskId>`: written by webhooks, never backwards (a late `running` cannot undo `succeeded`);
 * - `results:<taskId>`: the provider's results, written by the first reader after success.
 */
export class DataTaskStore {
  private readonly mutex = new KeyedMutex();

  constructor(private readonly keyv: Keyv<StoredValue>) {}

  async putRequest(record: DataTaskRequestRecord): Promise<void> {
    await this.keyv.set(`request:${record.tokenHash}`, record, this.ttlFrom(record.createdAt));
  }

  async requestByTokenHash(tokenHash: string): Promise<DataTaskRequestRecord | undefined> {
    return (await this.keyv.get(`request:${tokenHash}`)) as DataTaskRequestRecord | undefined;
  }

  async deleteRequest(tokenHash: string): Promise<void> {
    await this.keyv.delete(`request:${tokenHash}`);
  }

  async bindTask(taskId: string, request: DataTaskRequestRecord): Promise<void> {
    await this.keyv.set(`task:${taskId}`, request.tokenHash, this.ttlFrom(request.createdAt));
  }

  async find(taskId: string): Promise<DataTaskRecord | undefined> {
    const tokenHash = (await this.keyv.get(`task:${taskId}`)) as string | undefined;
    if (tokenHash === undefined) return undefined;
    const [request, state] = await Promise.all([this.requestByTokenHash(tokenHash), this.state(taskId)]);
    if (!request) return undefined;
    return {
      id: taskId,
      userId: request.userId,
      connectionId: request.connectionId,
      resource: request.resource,
      request: request.request,
      status: state?.status ?? DataTaskStatus.QUEUED,
      createdAt: request.createdAt,
      completedAt: state?.completedAt ?? null,
    };
  }

  async state(taskId: string): Promise<DataTaskStateRecord | undefined> {
    return (await this.keyv.get(`state:${taskId}`)) as DataTaskStateRecord | undefined;
  }

  /** Records a notification's status unless the task is already as far or further; true when it changed. */
  recordState(next: DataTaskStateRecord, request: DataTaskRequestRecord): Promise<boolean> {
    return this.mutex.run(`state:${next.taskId}`, async () => {
      const current = await this.state(next.taskId);
      if (current && RANK[current.status] >= RANK[next.status]) return false;
      await this.keyv.set(`state:${next.taskId}`, next, this.ttlFrom(request.createdAt));
      return true;
    });
  }

  async results(taskId: string): Promise<unknown[] | undefined> {
    return (await this.keyv.get(`results:${taskId}`)) as unknown[] | undefined;
  }

  async putResults(taskId: string, results: unknown[], createdAt: string): Promise<void> {
    await this.keyv.set(`results:${taskId}`, results, this.ttlFrom(createdAt));
  }

  private ttlFrom(createdAt: string): number {
    return Math.max(60_000, Date.parse(createdAt) + DATA_TASK_TTL_MS - Date.now());
  }
}
