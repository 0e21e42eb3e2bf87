import { createHash } from 'node:crypto';
import { sql, type Insertable, type Kysely, type Selectable, type SelectQueryBuilder, type Transaction } from 'kysely';
import type { DataRequest } from '../platform/provider/data.client';
import type { Database } from '../platform/db/database';
import type { DataTaskRequestsTable, DataTasksTable, Tables } from '../platform/db/tables';
import { inTransaction } from '../platform/db/transaction';
import { dataTaskLifecycle, type DataResource, type DataTaskStatus } from './data-task.model';

/** A data task is a short errand: its record, state and results are kept a day after it was started. */
export const DATA_TASK_TTL_MS = 24 * 3600 * 1000;

/** What DataTaskService.start wrote, keyed by the hash of the task's webhook secret (the store never holds the secret). */
export interface DataTaskRequestRecord {
  tokenHash: string;
  userId: string;
  /** The bank connection the task was started through: its results are fetched with the same grant (DataTaskServiceDeps.connectionBearer). */
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

/** The reason a task whose results were too large to keep is FAILED with (the store's and the logs' word). */
export function resultsTooLarge(bytes: number, maxBytes: number): string {
  return `results_too_large: ${bytes} bytes, over DATA_TASK_RESULTS_MAX_BYTES (${maxBytes})`;
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
    const row = requestRow(record);
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
        status: 'QUEUED',
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

  /** The tasks among these ids, read in one query (node(id:) asks for a batch). */
  async findMany(taskIds: readonly string[]): Promise<DataTaskRecord[]> {
    if (taskIds.length === 0) return [];
    const rows = await this.joined()
      .where('dataTasks.taskId', 'in', [...new Set(taskIds)])
      .execute();
    return rows.map(taskFromRow);
  }

  async find(taskId: string): Promise<DataTaskRecord | undefined> {
    const row = await this.joined().where('dataTasks.taskId', '=', taskId).executeTakeFirst();
    return row && taskFromRow(row);
  }

  /** Records a status unless the task is already as far or further; true when it changed. */
  async recordState(next: DataTaskStateRecord): Promise<boolean> {
    const result = await this.database.db
      .updateTable('dataTasks')
      .set({
        status: next.status,
        providerStatus: next.providerStatus,
        completedAtMs: next.completedAt === null ? null : Date.parse(next.completedAt),
        updatedAtMs: Date.parse(next.updatedAt),
        ...(next.status === 'FAILED' ? { failureReason: next.providerStatus } : {}),
      })
      .where('taskId', '=', next.taskId)
      .where('status', 'in', dataTaskLifecycle.before(next.status))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** The stored results, read in the same statement that checks the task's connection is still there. */
  async results(taskId: string): Promise<unknown[] | undefined> {
    const row = await this.database.db
      .selectFrom('dataTasks')
      .innerJoin('dataTaskRequests', 'dataTaskRequests.tokenHash', 'dataTasks.tokenHash')
      .innerJoin('bankConnections', 'bankConnections.id', 'dataTaskRequests.connectionId')
      .select('dataTasks.results')
      .where('dataTasks.taskId', '=', taskId)
      .where('bankConnections.status', '!=', 'revoked')
      .executeTakeFirst();
    return row?.results ? (JSON.parse(row.results) as unknown[]) : undefined;
  }

  /**
   * Keeps a task's results unless they are larger than `maxBytes` once serialised (nothing is written then) or
   * the task's connection was revoked meanwhile (a disconnect that raced the fetch: the results are not kept).
   */
  async putResults(taskId: string, results: unknown[], maxBytes: number): Promise<{ stored: true } | { stored: false; bytes: number }> {
    const text = JSON.stringify(results);
    const bytes = Buffer.byteLength(text);
    if (bytes > maxBytes) return { stored: false, bytes };
    await this.database.db
      .updateTable('dataTasks')
      .set({ results: text })
      .where('taskId', '=', taskId)
      .where('tokenHash', 'in', (db) =>
        db
          .selectFrom('dataTaskRequests')
          .innerJoin('bankConnections', 'bankConnections.id', 'dataTaskRequests.connectionId')
          .select('dataTaskRequests.tokenHash')
          .where('bankConnections.status', '!=', 'revoked'),
      )
      .execute();
    return { stored: true };
  }

  /** Fails a task whose results cannot be kept, whatever it was; true when it changed. */
  async failTask(taskId: string, reason: string, at: number): Promise<boolean> {
    const result = await this.database.db
      .updateTable('dataTasks')
      .set({ status: 'FAILED', providerStatus: reason, failureReason: reason, results: null, completedAtMs: at, updatedAtMs: at })
      .where('taskId', '=', taskId)
      .where('status', '!=', 'FAILED')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Drops every task (and stored result) started through this connection: it was disconnected. */
  async forgetConnection(connectionId: string): Promise<number> {
    return this.forgetRequests((db) => db.selectFrom('dataTaskRequests').select('tokenHash').where('connectionId', '=', connectionId));
  }

  /** Drops every task (and stored result) of this user: they were revoked. */
  async forgetUser(userId: string): Promise<number> {
    return this.forgetRequests((db) => db.selectFrom('dataTaskRequests').select('tokenHash').where('userId', '=', userId));
  }

  /**
   * Drops the tasks of every revoked connection, however it was revoked (a disconnect, a revoked user, a grant that
   * replaced it, an event this instance missed): the reconciler's sweep behind the deletions on revocation.
   */
  async forgetRevokedConnections(): Promise<number> {
    return this.forgetRequests((db) =>
      db
        .selectFrom('dataTaskRequests')
        .innerJoin('bankConnections', 'bankConnections.id', 'dataTaskRequests.connectionId')
        .select('dataTaskRequests.tokenHash')
        .where('bankConnections.status', '=', 'revoked'),
    );
  }

  /**
   * Tasks this user has open or stored (started within DATA_TASK_TTL_MS) and, when there are any, when the oldest
   * of them is forgotten.
   */
  private async countOf(trx: Transaction<Tables>, userId: string): Promise<{ count: number; oldestMs: number | null }> {
    const row = await trx
      .selectFrom('dataTaskRequests')
      .select((eb) => [eb.fn.countAll<string | number>().as('count'), eb.fn.min<number | string | null>('createdAtMs').as('oldestMs')])
      .where('userId', '=', userId)
      .where('createdAtMs', '>=', this.now() - DATA_TASK_TTL_MS)
      .executeTakeFirstOrThrow();
    return { count: Number(row.count), oldestMs: row.oldestMs === null ? null : Number(row.oldestMs) };
  }

  /**
   * Stores a new request unless its user already has `max` tasks open or stored: then nothing is written and the
   * answer says when the oldest is forgotten. One user's starts are counted one at a time across instances (an
   * advisory lock on PostgreSQL; SQLite's write transactions are serial), so a burst cannot pass the cap.
   */
  async putRequestWithin(record: DataTaskRequestRecord, max: number): Promise<{ stored: true } | { stored: false; freesAtMs: number }> {
    return this.underUserLock(record.userId, async (trx) => {
      const { count, oldestMs } = await this.countOf(trx, record.userId);
      if (count >= max) return { stored: false, freesAtMs: (oldestMs ?? this.now()) + DATA_TASK_TTL_MS };
      await trx.insertInto('dataTaskRequests').values(requestRow(record)).execute();
      return { stored: true };
    });
  }

  private underUserLock<T>(userId: string, work: (trx: Transaction<Tables>) => Promise<T>): Promise<T> {
    if (this.database.kind !== 'postgres') return inTransaction(this.database, work);
    return this.database.db
      .transaction()
      .setIsolationLevel('read committed')
      .execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtextextended(${`data-tasks-of:${userId}`}, 0))`.execute(trx);
        return work(trx);
      });
  }

  private async forgetRequests(tokenHashes: (db: Kysely<Tables>) => SelectQueryBuilder<Tables, 'dataTaskRequests', { tokenHash: string }>): Promise<number> {
    // The tasks first: their rows point at the requests.
    await this.database.db.deleteFrom('dataTasks').where('tokenHash', 'in', tokenHashes(this.database.db)).execute();
    const result = await this.database.db.deleteFrom('dataTaskRequests').where('tokenHash', 'in', tokenHashes(this.database.db)).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Tasks not finished that started before `startedBefore`, oldest first: their webhook is overdue. */
  async overdue(startedBefore: number, limit: number): Promise<OverdueDataTask[]> {
    const rows = await this.joined()
      .where('dataTasks.status', 'in', ['QUEUED', 'RUNNING'])
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

  /** Tasks with their request, only while the connection they were started through is not revoked. */
  private joined() {
    return this.database.db
      .selectFrom('dataTasks')
      .innerJoin('dataTaskRequests', 'dataTaskRequests.tokenHash', 'dataTasks.tokenHash')
      .innerJoin('bankConnections', 'bankConnections.id', 'dataTaskRequests.connectionId')
      .where('bankConnections.status', '!=', 'revoked')
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

function requestRow(record: DataTaskRequestRecord): Insertable<DataTaskRequestsTable> {
  return {
    tokenHash: record.tokenHash,
    userId: record.userId,
    connectionId: record.connectionId ?? null,
    resource: record.resource,
    request: JSON.stringify(record.request),
    taskId: record.taskId ?? null,
    createdAtMs: Date.parse(record.createdAt),
  };
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
