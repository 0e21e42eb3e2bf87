import { randomBytes } from 'node:crypto';
import { requireUser } from '../platform/access/principal';
import type { GatewayContext } from '../platform/graphql/operation-context';
import type { DataRequest, DataResource as ProviderDataResource } from '../platform/provider/data.client';
import { DataTaskLimitExceededError, NotFoundError, UpstreamError } from '../platform/errors/gateway-errors';
import { DataResource } from './data-resource.enum';
import { DataTaskStatus } from './data-task-status.enum';
import type { StartDataTaskInput } from './start-data-task.input';
import { hashTaskToken, resultsTooLarge, type DataTaskRecord, type DataTaskRequestRecord, type DataTaskStore } from './data-task.store';
import { InputProblems } from '../platform/validation/input-problems';
import { isUuid, shown } from '../platform/validation/text-rules';
import { DATA_WEBHOOK_PREFIX } from '../webhooks/webhook.receiver';

/** The provider call behind each GraphQL resource, and what the input may carry for it. */
const RESOURCES: Readonly<Record<DataResource, { provider: ProviderDataResource; id: 'account' | 'card' | null; dates: boolean }>> = {
  [DataResource.ACCOUNTS]: { provider: 'accounts', id: null, dates: false },
  [DataResource.ACCOUNT_TRANSACTIONS]: { provider: 'accountTransactions', id: 'account', dates: true },
  [DataResource.ACCOUNT_BALANCE]: { provider: 'accountBalance', id: 'account', dates: false },
  [DataResource.CARDS]: { provider: 'cards', id: null, dates: false },
  [DataResource.CARD_TRANSACTIONS]: { provider: 'cardTransactions', id: 'card', dates: true },
  [DataResource.CARD_BALANCE]: { provider: 'cardBalance', id: 'card', dates: false },
};

/** Account and card ids are the provider's opaque strings; they go into a URL path, so they are kept plain. */
const PROVIDER_ID = /^[A-Za-z0-9._:~-]{1,128}$/;

/** Checked before anything is stored or sent: every problem of the input at once, each naming its field. */
export function dataRequestFrom(input: StartDataTaskInput): DataRequest {
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
 * Mutation.startDataTask. The request is stored under a fresh secret before the provider is called, because the
 * provider may notify before its acknowledgement has been handled here; the secret goes into webhook_uri, so
 * only the provider (and the signature check) can complete this task.
 */
export async function startDataTask(context: GatewayContext, input: StartDataTaskInput): Promise<DataTaskRecord> {
  const user = requireUser(context.principal);
  const request = dataRequestFrom(input);
  const connectionId = await connectionFor(context, request, input.connectionId ?? undefined);
  const { dataTasks } = context.services.live;
  const token = randomBytes(32).toString('base64url');
  const record: DataTaskRequestRecord = {
    tokenHash: hashTaskToken(token),
    userId: user.userId,
    connectionId,
    resource: input.resource,
    request,
    createdAt: new Date().toISOString(),
  };
  const { maxPerUser } = context.services.config.dataTasks;
  const admitted = await dataTasks.putRequestWithin(record, maxPerUser);
  if (!admitted.stored) {
    throw new DataTaskLimitExceededError(
      `This user already has ${maxPerUser} data tasks open or stored, the most DATA_TASKS_MAX_PER_USER allows. A task is kept 24 hours after it starts; the oldest is forgotten at ${new Date(admitted.freesAtMs).toISOString()}.`,
      'DATA_TASKS_MAX_PER_USER',
      maxPerUser,
    );
  }
  let taskId: string;
  try {
    const webhookUri = `${context.services.live.publicUrl()}${DATA_WEBHOOK_PREFIX}${token}`;
    const ack = await context.services.data.startTask(context.bankBearer(connectionId), request, webhookUri, context.callOptions());
    if (typeof ack?.task_id !== 'string' || ack.task_id === '') {
      throw new UpstreamError('The provider accepted the data task without naming it. Try again; report it if it persists.');
    }
    taskId = ack.task_id.toLowerCase();
  } catch (error) {
    await dataTasks.deleteRequest(record.tokenHash).catch(() => undefined);
    throw error;
  }
  const bound = { ...record, taskId };
  await dataTasks.putRequest(bound);
  await dataTasks.bindTask(taskId, bound);
  const task = await dataTasks.find(taskId);
  return (
    task ?? {
      id: taskId,
      userId: user.userId,
      connectionId,
      resource: input.resource,
      request,
      status: DataTaskStatus.QUEUED,
      createdAt: record.createdAt,
      completedAt: null,
    }
  );
}

/** The task if it exists and this user started it; anyone else's reads as unknown. */
export async function findOwnTask(context: GatewayContext, id: string): Promise<DataTaskRecord | undefined> {
  const user = requireUser(context.principal);
  if (!isUuid(id)) {
    const problems = new InputProblems();
    problems.add('id', `must be a data task id, a UUID; got ${shown(id)}`);
    problems.throwIfAny();
  }
  const task = await context.services.live.dataTasks.find(id.toLowerCase());
  return task && task.userId === user.userId ? task : undefined;
}

export async function requireOwnTask(context: GatewayContext, id: string): Promise<DataTaskRecord> {
  const task = await findOwnTask(context, id);
  if (!task) throw new NotFoundError('No data task with that id was started by this user.');
  return task;
}

/**
 * A succeeded task's results: read once from the provider (by task id, from {data_url}; never from the
 * webhook's results_uri, which is input), then served from the store to every later reader on every instance.
 * Concurrent readers in this process share one fetch.
 */
export class DataTaskResults {
  private readonly inFlight = new Map<string, Promise<{ connectionId: string; results: unknown[] }>>();

  constructor(
    private readonly store: DataTaskStore,
    private readonly maxBytes: number,
  ) {}

  /** The results, and the connection they were read through (Account.connection and Card.connection name it). */
  get(context: GatewayContext, task: { id: string; resource: DataResource; createdAt: string }): Promise<{ connectionId: string; results: unknown[] }> {
    const pending = this.inFlight.get(task.id);
    if (pending) return pending;
    requireUser(context.principal);
    const work = (async () => {
      // Both reads check that the task's connection is still there: a disconnected bank's results are never served.
      const record = await this.store.find(task.id);
      if (!record?.connectionId) throw new NotFoundError('No data task with that id was started through an active bank connection of this user.');
      const cached = await this.store.results(task.id);
      const { connectionId } = record;
      if (cached) return { connectionId, results: cached };
      const results = (await context.services.data.taskResults(
        context.bankBearer(connectionId),
        task.id,
        RESOURCES[task.resource].provider,
        context.callOptions(),
      )) as unknown[];
      const kept = await this.store.putResults(task.id, results, this.maxBytes);
      if (!kept.stored) {
        // Failed rather than left SUCCEEDED: otherwise every read would fetch the whole answer from the provider again.
        await this.store.failTask(task.id, resultsTooLarge(kept.bytes, this.maxBytes), Date.now());
        throw new DataTaskLimitExceededError(
          `The task's results are ${kept.bytes} bytes, more than the ${this.maxBytes} bytes DATA_TASK_RESULTS_MAX_BYTES lets the gateway keep for one task, so the task is now FAILED. Start it again for less, e.g. a shorter from/to range of transactions.`,
          'DATA_TASK_RESULTS_MAX_BYTES',
          this.maxBytes,
        );
      }
      return { connectionId, results };
    })().finally(() => this.inFlight.delete(task.id));
    this.inFlight.set(task.id, work);
    return work;
  }
}

/**
 * Which of the user's active connections a task runs through: the one asked for, else for an account or card the
 * connection that shows it (from the lists this request reads anyway), else the oldest.
 */
async function connectionFor(context: GatewayContext, request: DataRequest, asked: string | undefined): Promise<string> {
  if (asked !== undefined) return (await context.activeConnection(asked)).id;
  const active = (await context.connections()).filter((connection) => connection.status === 'active');
  if (active.length === 0) throw new NotFoundError('This user has no active bank connection; connect a bank first.');
  const id = 'id' in request ? request.id : undefined;
  if (id === undefined || active.length === 1) return active[0]!.id;
  const list = request.resource.startsWith('account') ? 'accounts' : 'cards';
  for (const connection of active) {
    const items = await context
      .loadersFor(connection.id)
      .load({ resource: list })
      .catch(() => []);
    if (items.some((item) => item.account_id === id)) return connection.id;
  }
  throw new NotFoundError(`No ${list === 'accounts' ? 'account' : 'card'} with that id is shown by any of this user's banks.`);
}
