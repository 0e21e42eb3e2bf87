import { randomBytes } from 'node:crypto';
import type { DataClient, DataRequest, DataResource as ProviderDataResource } from '../platform/provider/data.client';
import type { BearerAuth, CallOptions } from '../platform/provider/http.client';
import type { Logger } from '../platform/observability/logger';
import { DataTaskLimitExceededError, NotFoundError, UpstreamError } from '../platform/errors/gateway-errors';
import { InputProblems } from '../platform/validation/input-problems';
import { isUuid, shown } from '../platform/validation/text-rules';
import { DATA_TASK_WEBHOOK_PREFIX, dataTaskLifecycle, type DataResource, type DataTaskStatus } from './data-task.model';
import { toDataTaskSnapshot, type DataTaskSnapshot } from './data-task.snapshot';
import {
  DATA_TASK_TTL_MS,
  hashTaskToken,
  resultsTooLarge,
  type DataTaskRecord,
  type DataTaskRequestRecord,
  type DataTaskStore,
  type OverdueDataTask,
} from './data-task.store';

/** The provider call behind each resource, and what the input may carry for it. */
const RESOURCES: Readonly<Record<DataResource, { provider: ProviderDataResource; id: 'account' | 'card' | null; dates: boolean }>> = {
  ACCOUNTS: { provider: 'accounts', id: null, dates: false },
  ACCOUNT_TRANSACTIONS: { provider: 'accountTransactions', id: 'account', dates: true },
  ACCOUNT_BALANCE: { provider: 'accountBalance', id: 'account', dates: false },
  CARDS: { provider: 'cards', id: null, dates: false },
  CARD_TRANSACTIONS: { provider: 'cardTransactions', id: 'card', dates: true },
  CARD_BALANCE: { provider: 'cardBalance', id: 'card', dates: false },
};

/** Account and card ids are the provider's opaque strings; they go into a URL path, so they are kept plain. */
const PROVIDER_ID = /^[A-Za-z0-9._:~-]{1,128}$/;

/** A per-task webhook token as start makes them: 32 random bytes, base64url. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** What a caller asks a data task for (StartDataTaskInput has this shape). */
export interface DataTaskInput {
  resource: DataResource;
  id?: string | null;
  from?: string | null;
  to?: string | null;
}

/** A validated start: whose task, through which bank connection (and its bearer), for what. */
export interface StartDataTask {
  userId: string;
  connectionId: string;
  bearer: BearerAuth;
  resource: DataResource;
  request: DataRequest;
}

/** A succeeded task's results, and the connection they were read through (accounts and cards name it). */
export interface DataTaskResults {
  connectionId: string;
  results: unknown[];
}

/** What the data-task pass repaired, for the scheduler's repair counter. */
export interface DataTaskRepair {
  kind: 'data_task_completed' | 'data_task_failed';
  taskId: string;
}

/** Announces a task's change to its subscribers (the composition root publishes it on the task's topic). */
export interface DataTaskEvents {
  publish(snapshot: DataTaskSnapshot): Promise<void>;
}

export interface DataTaskSettings {
  /** DATA_TASKS_MAX_PER_USER. */
  maxPerUser: number;
  /** DATA_TASK_RESULTS_MAX_BYTES. */
  resultsMaxBytes: number;
  /** DATA_TASK_WEBHOOK_GRACE_MS: after this long without a webhook, the data-task pass fetches the results itself. */
  webhookGraceMs: number;
}

export interface DataTaskServiceDeps {
  data: DataClient;
  store: DataTaskStore;
  events: DataTaskEvents;
  /** Epoch ms. */
  clock: () => number;
  logger: Logger;
  settings: DataTaskSettings;
  /** Where the provider reaches this gateway (PUBLIC_URL, or the address it listens on), read at each start. */
  publicUrl(): string;
  /**
   * The bank token background work uses for a task whose webhook never came: that of the connection the task was
   * started through while it is active, else undefined. The one way this feature obtains a token outside a request.
   */
  connectionBearer(connectionId: string): Promise<BearerAuth | undefined>;
}

/** Checked before anything is stored or sent: every problem of the input at once, each naming its field. */
export function dataRequestFrom(input: DataTaskInput): DataRequest {
  const rule = RESOURCES[input.resource];
  const problems = new InputProblems();
  const id = input.id ?? undefined;
  if (rule.id === null && id !== undefined) problems.add('input.id', `must be omitted for ${input.resource}`);
  if (rule.id !== null && id === undefined) problems.add('input.id', `is required for ${input.resource}: the ${rule.id} id`);
  if (rule.id !== null && id !== undefined && !PROVIDER_ID.test(id))
    problems.add('input.id', `must be ${rule.id === 'account' ? 'an account' : 'a card'} id; got ${shown(id)}`);
  const from = input.from ?? undefined;
  const to = input.to ?? undefined;
  if (!rule.dates) {
    if (from !== undefined) problems.add('input.from', `applies only to ACCOUNT_TRANSACTIONS and CARD_TRANSACTIONS`);
    if (to !== undefined) problems.add('input.to', `applies only to ACCOUNT_TRANSACTIONS and CARD_TRANSACTIONS`);
  } else if (from !== undefined && to !== undefined && from > to) {
    problems.add('input.from', `must not be after input.to; got from ${from} and to ${to}`);
  }
  problems.throwIfAny();
  switch (rule.provider) {
    case 'accounts':
    case 'cards':
      return { resource: rule.provider };
    case 'accountTransactions':
    case 'cardTransactions':
      return { resource: rule.provider, id: id!, ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
    default:
      return { resource: rule.provider as 'accountBalance' | 'cardBalance', id: id! };
  }
}

/**
 * Async data tasks: started with the provider, completed by its notifications (data-task.webhook.ts) or, when
 * those never come, by the data-task pass; results read once from the provider and then served from the store.
 */
export class DataTaskService {
  /** Concurrent readers in this process share one fetch of a task's results. */
  private readonly inFlight = new Map<string, Promise<DataTaskResults>>();

  constructor(private readonly deps: DataTaskServiceDeps) {}

  /**
   * The request is stored under a fresh secret before the provider is called, because the provider may notify
   * before its acknowledgement has been handled here; the secret goes into webhook_uri, so only the provider (and
   * the signature check) can complete this task.
   */
  async start(start: StartDataTask, options: CallOptions): Promise<DataTaskRecord> {
    const { store, settings } = this.deps;
    const token = randomBytes(32).toString('base64url');
    const record: DataTaskRequestRecord = {
      tokenHash: hashTaskToken(token),
      userId: start.userId,
      connectionId: start.connectionId,
      resource: start.resource,
      request: start.request,
      createdAt: new Date(this.deps.clock()).toISOString(),
    };
    const admitted = await store.putRequestWithin(record, settings.maxPerUser);
    if (!admitted.stored) {
      throw new DataTaskLimitExceededError(
        `This user already has ${settings.maxPerUser} data tasks open or stored, the most DATA_TASKS_MAX_PER_USER allows. A task is kept 24 hours after it starts; the oldest is forgotten at ${new Date(admitted.freesAtMs).toISOString()}.`,
        'DATA_TASKS_MAX_PER_USER',
        settings.maxPerUser,
      );
    }
    let taskId: string;
    try {
      const webhookUri = `${this.deps.publicUrl()}${DATA_TASK_WEBHOOK_PREFIX}${token}`;
      const ack = await this.deps.data.startTask(start.bearer, start.request, webhookUri, options);
      if (typeof ack?.task_id !== 'string' || ack.task_id === '') {
        throw new UpstreamError('The provider accepted the data task without naming it. Try again; report it if it persists.');
      }
      taskId = ack.task_id.toLowerCase();
    } catch (error) {
      await store.deleteRequest(record.tokenHash).catch(() => undefined);
      throw error;
    }
    const bound = { ...record, taskId };
    await store.putRequest(bound);
    await store.bindTask(taskId, bound);
    const task = await store.find(taskId);
    const { userId, connectionId, resource, request } = start;
    return task ?? { id: taskId, userId, connectionId, resource, request, status: 'QUEUED', createdAt: record.createdAt, completedAt: null };
  }

  /** The task if it exists and this user started it; anyone else's reads as unknown. */
  async findOwn(userId: string, id: string): Promise<DataTaskRecord | undefined> {
    if (!isUuid(id)) {
      const problems = new InputProblems();
      problems.add('id', `must be a data task id, a UUID; got ${shown(id)}`);
      problems.throwIfAny();
    }
    const task = await this.deps.store.find(id.toLowerCase());
    return task && task.userId === userId ? task : undefined;
  }

  /** Each of these task ids' task if this user started it, read in one store query; undefined for any other id. */
  async findOwnMany(userId: string, ids: readonly string[]): Promise<(DataTaskRecord | undefined)[]> {
    const wanted = ids.filter(isUuid).map((id) => id.toLowerCase());
    const tasks = new Map((await this.deps.store.findMany(wanted)).filter((task) => task.userId === userId).map((task) => [task.id, task]));
    return ids.map((id) => (isUuid(id) ? tasks.get(id.toLowerCase()) : undefined));
  }

  async requireOwn(userId: string, id: string): Promise<DataTaskRecord> {
    const task = await this.findOwn(userId, id);
    if (!task) throw new NotFoundError('No data task with that id was started by this user.');
    return task;
  }

  /**
   * A succeeded task's results: read once from the provider (by task id, from {data_url}; never from the
   * webhook's results_uri, which is input) with the bearer of the connection the task was started through, then
   * served from the store to every later reader on every instance.
   */
  results(task: { id: string; resource: DataResource }, bearerFor: (connectionId: string) => BearerAuth, options: CallOptions): Promise<DataTaskResults> {
    const pending = this.inFlight.get(task.id);
    if (pending) return pending;
    const work = this.readResults(task, bearerFor, options).finally(() => this.inFlight.delete(task.id));
    this.inFlight.set(task.id, work);
    return work;
  }

  private async readResults(
    task: { id: string; resource: DataResource },
    bearerFor: (connectionId: string) => BearerAuth,
    options: CallOptions,
  ): Promise<DataTaskResults> {
    const { store, settings } = this.deps;
    // Both reads check that the task's connection is still there: a disconnected bank's results are never served.
    const record = await store.find(task.id);
    if (!record?.connectionId) throw new NotFoundError('No data task with that id was started through an active bank connection of this user.');
    const cached = await store.results(task.id);
    const { connectionId } = record;
    if (cached) return { connectionId, results: cached };
    const results = (await this.deps.data.taskResults(bearerFor(connectionId), task.id, RESOURCES[task.resource].provider, options)) as unknown[];
    const kept = await store.putResults(task.id, results, settings.resultsMaxBytes);
    if (!kept.stored) {
      // Failed rather than left SUCCEEDED: otherwise every read would fetch the whole answer from the provider again.
      await store.failTask(task.id, resultsTooLarge(kept.bytes, settings.resultsMaxBytes), this.deps.clock());
      throw new DataTaskLimitExceededError(
        `The task's results are ${kept.bytes} bytes, more than the ${settings.resultsMaxBytes} bytes DATA_TASK_RESULTS_MAX_BYTES lets the gateway keep for one task, so the task is now FAILED. Start it again for less, e.g. a shorter from/to range of transactions.`,
        'DATA_TASK_RESULTS_MAX_BYTES',
        settings.resultsMaxBytes,
      );
    }
    return { connectionId, results };
  }

  /** The request a notification's path token was issued for; undefined for any token this gateway did not issue. */
  async requestForToken(token: string): Promise<DataTaskRequestRecord | undefined> {
    if (!TOKEN_SHAPE.test(token)) return undefined;
    return this.deps.store.requestByTokenHash(hashTaskToken(token));
  }

  /** Records what the provider said about a task of `request`; a status only moves forward. */
  async recordProviderState(request: DataTaskRequestRecord, taskId: string, status: DataTaskStatus, providerStatus: string, at: Date): Promise<void> {
    const when = at.toISOString();
    await this.deps.store.bindTask(taskId, request);
    await this.deps.store.recordState({ taskId, status, providerStatus, completedAt: dataTaskLifecycle.isFinal(status) ? when : null, updatedAt: when });
  }

  /** Announces the task as it now stands to its subscribers. */
  async publish(taskId: string): Promise<void> {
    const task = await this.deps.store.find(taskId);
    if (task) await this.deps.events.publish(toDataTaskSnapshot(task));
  }

  /** Drops every task (and stored result) started through this connection: it was disconnected. */
  forgetConnection(connectionId: string): Promise<number> {
    return this.deps.store.forgetConnection(connectionId);
  }

  /** Drops every task (and stored result) of this user: they were revoked. */
  forgetUser(userId: string): Promise<number> {
    return this.deps.store.forgetUser(userId);
  }

  /**
   * The background pass over data tasks: forgets tasks past DATA_TASK_TTL_MS and those of revoked connections;
   * for tasks with no webhook DATA_TASK_WEBHOOK_GRACE_MS after they started, fetches the results by task id and
   * completes the task (its subscribers with it), or marks it FAILED with the reason. Looks at `batch` overdue
   * tasks at most and stops early once `stopped()` says so.
   */
  async reconcile(batch: number, stopped: () => boolean = () => false): Promise<DataTaskRepair[]> {
    const { store, settings } = this.deps;
    const now = this.deps.clock();
    await store.forgetStartedBefore(now - DATA_TASK_TTL_MS);
    await store.forgetRevokedConnections();
    const repairs: DataTaskRepair[] = [];
    for (const task of await store.overdue(now - settings.webhookGraceMs, batch)) {
      if (stopped()) break;
      const repair = await this.completeOverdue(task);
      if (repair) repairs.push(repair);
    }
    return repairs;
  }

  private async completeOverdue(task: OverdueDataTask): Promise<DataTaskRepair | undefined> {
    const { store, settings } = this.deps;
    const bearer = task.connectionId === undefined ? undefined : await this.deps.connectionBearer(task.connectionId);
    if (!bearer) return this.failOverdue(task, 'the bank connection that started it ended before its results could be fetched; start the task again');
    let results: unknown[];
    try {
      // A background job, not an operation: its provider calls have no deadline but their HTTP timeouts.
      results = (await this.deps.data.taskResults(bearer, task.id, task.request.resource, { requestId: 'reconciler' })) as unknown[];
    } catch (error) {
      if (error instanceof NotFoundError) return this.failOverdue(task, 'the provider has no such task');
      // Not ready yet, or the provider is unavailable: the next pass asks again.
      this.deps.logger.info({ err: error, taskId: task.id }, 'overdue data task not fetched yet');
      return undefined;
    }
    const kept = await store.putResults(task.id, results, settings.resultsMaxBytes);
    if (!kept.stored) return this.failOverdue(task, resultsTooLarge(kept.bytes, settings.resultsMaxBytes));
    const at = new Date(this.deps.clock()).toISOString();
    const changed = await store.recordState({ taskId: task.id, status: 'SUCCEEDED', providerStatus: 'succeeded', completedAt: at, updatedAt: at });
    return changed ? this.repaired({ kind: 'data_task_completed', taskId: task.id }) : undefined;
  }

  private async failOverdue(task: OverdueDataTask, reason: string): Promise<DataTaskRepair | undefined> {
    const at = new Date(this.deps.clock()).toISOString();
    const changed = await this.deps.store.recordState({ taskId: task.id, status: 'FAILED', providerStatus: reason, completedAt: at, updatedAt: at });
    return changed ? this.repaired({ kind: 'data_task_failed', taskId: task.id }, reason) : undefined;
  }

  private async repaired(repair: DataTaskRepair, reason?: string): Promise<DataTaskRepair> {
    this.deps.logger.info({ taskId: repair.taskId, repair: repair.kind, reason }, 'reconciler repaired a data task');
    await this.publish(repair.taskId).catch((error: unknown) =>
      this.deps.logger.warn({ err: error, taskId: repair.taskId }, 'data task change could not be published'),
    );
    return repair;
  }
}
