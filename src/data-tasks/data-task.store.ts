import { createHash } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { DataRequest } from '../datasources/data.client';
import type { Database } from '../db/database';
import type { DataTaskRequestsTable, DataTasksTable } from '../db/tables';
import type { DataResource } from '../schema/data-resource.enum';
import { DataTaskStatus } from '../schema/data-task-status.enum';

/** A data task is a short errand: its record, state and results are kept a day after it was started. */
export const DATA_TASK_TTL_MS = 24 * 3600 * 1000;

/** What startDataTask wrote, keyed by the hash of the task's webhook secret (the store never holds the secret). */
export interface DataTaskRequestRecord {
  tokenHash: string;
  userId: string;
  /** The bank connection the task was started through: its results are fetched with the same grant (task-bearer.ts). */
  connectionId?: string;
  resource: DataResource;
  /** The provider call made, for fetching the results of the right kind. */
  request: DataRequest;
  createdAt: string;
  /** The provider's task id, once its acknowledgement (or the webhook, whichever came first) named it. */
  taskId?: string;
}

/** What the provider's notifications (or the reconciler) said about one task id. */
export interface DataTaskStateRecord {
  taskId: string;
  status: DataTaskStatus;
  /** The provider's own word (`succeeded`), or the reconciler's reason for FAILED, for logs and support. */
  providerStatus: string;
  completedAt: string | null;
  updatedAt: string;
}

/** A task as the API shows it. */
export interface DataTaskRecord {
  id: string;
  userId: string;
  /** Unset only for tasks started before bank connections existed (0003_identity). */
  connectionId?: string;
  resource: DataResource;
  request: DataRequest;
  status: DataTaskStatus;
  createdAt: string;
  completedAt: string | null;
}

/** A task whose webhook is overdue: the record names the connection the reconciler fetches its results with. */
export type OverdueDataTask = DataTaskRecord;

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

/**
 * Async data tasks in the relational store, so a restarted or different instance answers for them and the
 * reconciler can find the ones whose webhook never came. A request (keyed by its secret's hash) may have more than
 * one provider task (a retried start); each task's status only moves forward, in one conditional update, so a
 * late `running` cannot undo `succeeded` whichever instance receives it.
 */
export class DataTaskStore {
  constructor(
    private readonly database: Database,
    private readonly now: () => number = Date.now,
  ) {}

  async putRequest(record: DataTaskRequestRecord): Promise<void> {
    const row = {
      tokenHash: record.tokenHash,
      userId: record.userId,
      connectionId: record.connectionId ?? null,
      resource: record.resource,
      request: JSON.stringify(record.request),
      taskId: record.taskId ?? null,
      createdAtMs: Date.parse(record.createdAt),
    };
    await this.database.db
      .insertInto('dataTaskRequests')
      .values(row)
      .onConflict((conflict) => conflict.column('tokenHash').doUpdateSet({ taskId: row.taskId }))
      .execute();
  }

  async requestByTokenHash(tokenHash: string): Promise<DataTaskRequestRecord | undefined> {
    const row = await this.database.db.selectFrom('dataTaskRequests').selectAll().where('tokenHash', '=', tokenHash).executeTakeFirst();
    return row && requestFromRow(row);
  }

  async deleteRequest(tokenHash: string): Promise<void> {
    await this.database.db.deleteFrom('dataTaskRequests').where('tokenHash', '=', tokenHash).execute();
  }

  /** Ties a provider task to its request (idempotent: the acknowledgement and the webhook may both do it). */
  async bindTask(taskId: string, request: DataTaskRequestRecord): Promise<void> {
    const now = this.now();
    await this.database.db
      .insertInto('dataTasks')
      .values({
        taskId,
        tokenHash: request.tokenHash,
        status: DataTaskStatus.QUEUED,
        providerStatus: null,
        failureReason: null,
        results: null,
        completedAtMs: null,
        createdAtMs: Date.parse(request.createdAt),
        updatedAtMs: now,
      })
      .onConflict((conflict) => conflict.column('taskId').doNothing())
      .execute();
  }

  async find(taskId: string): Promise<DataTaskRecord | undefined> {
    const row = await this.joined().where('dataTasks.taskId', '=', taskId).executeTakeFirst();
    return row && taskFromRow(row);
  }

  /** Records a status unless the task is already as far or further; true when it changed. */
  async recordState(next: DataTaskStateRecord): Promise<boolean> {
    const lower = (Object.keys(RANK) as DataTaskStatus[]).filter((status) => RANK[status] < RANK[next.status]);
    const result = await this.database.db
      .updateTable('dataTasks')
      .set({
        status: next.status,
        providerStatus: next.providerStatus,
        completedAtMs: next.completedAt === null ? null : Date.parse(next.completedAt),
        updatedAtMs: Date.parse(next.updatedAt),
        ...(next.status === DataTaskStatus.FAILED ? { failureReason: next.providerStatus } : {}),
      })
      .where('taskId', '=', next.taskId)
      .where('status', 'in', lower)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async results(taskId: string): Promise<unknown[] | undefined> {
    const row = await this.database.db.selectFrom('dataTasks').select('results').where('taskId', '=', taskId).executeTakeFirst();
    return row?.results ? (JSON.parse(row.results) as unknown[]) : undefined;
  }

  async putResults(taskId: string, results: unknown[]): Promise<void> {
    await this.database.db
      .updateTable('dataTasks')
      .set({ results: JSON.stringify(results) })
      .where('taskId', '=', taskId)
      .execute();
  }

  /** Tasks not finished that started before `startedBefore`, oldest first: their webhook is overdue. */
  async overdue(startedBefore: number, limit: number): Promise<OverdueDataTask[]> {
    const rows = await this.joined()
      .where('dataTasks.status', 'in', [DataTaskStatus.QUEUED, DataTaskStatus.RUNNING])
      .where('dataTasks.createdAtMs', '<=', startedBefore)
      .orderBy('dataTasks.createdAtMs')
      .limit(limit)
      .execute();
    return rows.map(taskFromRow);
  }

  /** Drops requests (and their tasks) started before `startedBefore`: past DATA_TASK_TTL_MS nobody asks for them. */
  async forgetStartedBefore(startedBefore: number): Promise<number> {
    await this.database.db.deleteFrom('dataTasks').where('createdAtMs', '<', startedBefore).execute();
    const result = await this.database.db.deleteFrom('dataTaskRequests').where('createdAtMs', '<', startedBefore).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  private joined() {
    return this.database.db
      .selectFrom('dataTasks')
      .innerJoin('dataTaskRequests', 'dataTaskRequests.tokenHash', 'dataTasks.tokenHash')
      .select([
        'dataTasks.taskId',
        'dataTasks.status',
        'dataTasks.completedAtMs',
        'dataTaskRequests.userId',
        'dataTaskRequests.connectionId',
        'dataTaskRequests.resource',
        'dataTaskRequests.request',
        'dataTaskRequests.createdAtMs',
      ]);
  }
}

type JoinedRow = Pick<Selectable<DataTasksTable>, 'taskId' | 'status' | 'completedAtMs'> &
  Pick<Selectable<DataTaskRequestsTable>, 'userId' | 'connectionId' | 'resource' | 'request' | 'createdAtMs'>;

function taskFromRow(row: JoinedRow): DataTaskRecord {
  return {
    id: row.taskId,
    userId: row.userId,
    ...(row.connectionId === null ? {} : { connectionId: row.connectionId }),
    resource: row.resource as DataResource,
    request: JSON.parse(row.request) as DataRequest,
    status: row.status as DataTaskStatus,
    createdAt: new Date(Number(row.createdAtMs)).toISOString(),
    completedAt: row.completedAtMs === null ? null : new Date(Number(row.completedAtMs)).toISOString(),
  };
}

function requestFromRow(row: Selectable<DataTaskRequestsTable>): DataTaskRequestRecord {
  return {
    tokenHash: row.tokenHash,
    userId: row.userId,
    ...(row.connectionId === null ? {} : { connectionId: row.connectionId }),
    resource: row.resource as DataResource,
    request: JSON.parse(row.request) as DataRequest,
    createdAt: new Date(Number(row.createdAtMs)).toISOString(),
    ...(row.taskId === null ? {} : { taskId: row.taskId }),
  };
}
