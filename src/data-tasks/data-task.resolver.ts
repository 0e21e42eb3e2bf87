import { Args, Ctx, FieldResolver, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { OperationContext } from '../platform/graphql/operation-context';
import { STREAM_GIVEN_AT_START_UP } from '../platform/graphql/build-schema';
import {
  ACCOUNT_TAG,
  CARD_TAG,
  accountReads,
  toAccount,
  toAccountBalance,
  toCard,
  toCardBalance,
  toTransaction,
  type Account,
  type AccountBalance,
  type AccountGraphService,
  type AccountReads,
  type Card,
  type CardBalance,
  type Transaction,
} from '../accounts';
import type { ProviderAccount, ProviderAccountBalance, ProviderCard, ProviderCardBalance, ProviderTransaction } from '../platform/provider/provider-types';
import type { DataRequest } from '../platform/provider/data.client';
import { NotFoundError } from '../platform/errors/gateway-errors';
import { requireUser } from '../platform/access/principal';
import { BANK_CONNECTION_TAG } from '../identity';
import { providerIdOf } from '../platform/graphql/node/global-id';
import { IdArgs } from '../platform/graphql/types/id.args';
import type { DataResource } from './data-task.model';
import { DATA_TASK_TAG, DataTask } from './data-task.type';
import { StartDataTaskArgs } from './start-data-task.args';
import { toDataTask } from './data-task.mapper';
import { toDataTaskSnapshot, type DataTaskSnapshot } from './data-task.snapshot';
import { dataRequestFrom, type DataTaskService } from './data-task.service';

@Resolver(() => DataTask)
export class DataTaskResolver {
  constructor(
    private readonly dataTasks: DataTaskService,
    private readonly accountGraph: AccountGraphService,
  ) {}

  @Mutation(() => DataTask, { description: 'Starts an asynchronous data fetch; the result arrives later through dataTaskUpdated or dataTask.' })
  async startDataTask(@Args() { input }: StartDataTaskArgs, @Ctx() context: OperationContext): Promise<DataTask> {
    const user = requireUser(context.principal);
    // Global ids and the provider's ids are both taken: the input is read as the provider's.
    const request = dataRequestFrom({ ...input, id: input.id && providerIdOf(providerIdOf(input.id, ACCOUNT_TAG), CARD_TAG) });
    const reads = accountReads(context, this.accountGraph);
    const asked = input.connectionId === null || input.connectionId === undefined ? undefined : providerIdOf(input.connectionId, BANK_CONNECTION_TAG);
    const connectionId = await connectionFor(reads, request, asked);
    const task = await this.dataTasks.start(
      { userId: user.userId, connectionId, bearer: reads.bearerOf(connectionId), resource: input.resource, request },
      context.callOptions(),
    );
    return toDataTask(toDataTaskSnapshot(task));
  }

  /** Another user's task reads as null, exactly like an unknown id. */
  @Query(() => DataTask, { nullable: true, description: 'An asynchronous data task started by this session.' })
  async dataTask(@Args() { id }: IdArgs, @Ctx() context: OperationContext): Promise<DataTask | null> {
    const task = await this.dataTasks.findOwn(requireUser(context.principal).userId, providerIdOf(id, DATA_TASK_TAG));
    return task ? toDataTask(toDataTaskSnapshot(task)) : null;
  }

  @Subscription(() => DataTask, {
    description: 'Every status change of a data task; once SUCCEEDED its result fields resolve.',
    // type-graphql calls `subscribe` without the resolver instance: the gateway hands the schema dataTaskStream.
    subscribe: STREAM_GIVEN_AT_START_UP,
  })
  dataTaskUpdated(@Root() snapshot: DataTaskSnapshot, @Args() _args: IdArgs): DataTask {
    return toDataTask(snapshot);
  }

  @FieldResolver()
  async accounts(@Root() task: DataTask, @Ctx() context: OperationContext): Promise<Account[] | null> {
    const found = await this.resultsFor<ProviderAccount>(task, context, ['ACCOUNTS']);
    return found && found.results.map((account) => toAccount(account, found.connectionId));
  }

  @FieldResolver()
  async cards(@Root() task: DataTask, @Ctx() context: OperationContext): Promise<Card[] | null> {
    const found = await this.resultsFor<ProviderCard>(task, context, ['CARDS']);
    return found && found.results.map((card) => toCard(card, found.connectionId));
  }

  @FieldResolver()
  async transactions(@Root() task: DataTask, @Ctx() context: OperationContext): Promise<Transaction[] | null> {
    const found = await this.resultsFor<ProviderTransaction>(task, context, ['ACCOUNT_TRANSACTIONS', 'CARD_TRANSACTIONS']);
    if (!found) return null;
    // The account or card the task read: each transaction's global id names its list there.
    const record = await this.dataTasks.requireOwn(requireUser(context.principal).userId, task.taskId);
    const holderId = 'id' in record.request ? record.request.id : '';
    const list = task.resource === 'ACCOUNT_TRANSACTIONS' ? 'a' : 'c';
    return found.results.map((transaction) => toTransaction(transaction, { list, holderId }));
  }

  @FieldResolver()
  async accountBalance(@Root() task: DataTask, @Ctx() context: OperationContext): Promise<AccountBalance | null> {
    const [balance] = (await this.resultsFor<ProviderAccountBalance>(task, context, ['ACCOUNT_BALANCE']))?.results ?? [];
    return balance ? toAccountBalance(balance) : null;
  }

  @FieldResolver()
  async cardBalance(@Root() task: DataTask, @Ctx() context: OperationContext): Promise<CardBalance | null> {
    const [balance] = (await this.resultsFor<ProviderCardBalance>(task, context, ['CARD_BALANCE']))?.results ?? [];
    return balance ? toCardBalance(balance) : null;
  }

  /** The task's results when it has succeeded and the field matches its resource; null otherwise, with no call. */
  private async resultsFor<T>(task: DataTask, context: OperationContext, resources: DataResource[]): Promise<{ connectionId: string; results: T[] } | null> {
    if (task.status !== 'SUCCEEDED' || !resources.includes(task.resource)) return null;
    const reads = accountReads(context, this.accountGraph);
    const found = await this.dataTasks.results(
      { id: task.taskId, resource: task.resource },
      (connectionId) => reads.bearerOf(connectionId),
      context.callOptions(),
    );
    return found as { connectionId: string; results: T[] };
  }
}

/**
 * Which of the user's active connections a task runs through: the one asked for, else for an account or card the
 * connection that shows it (from the lists this request reads anyway), else the oldest.
 */
async function connectionFor(reads: AccountReads, request: DataRequest, asked: string | undefined): Promise<string> {
  if (asked !== undefined) return (await reads.activeConnection(asked)).id;
  const active = (await reads.connections()).filter((connection) => connection.status === 'active');
  if (active.length === 0) throw new NotFoundError('This user has no active bank connection; connect a bank first.');
  const id = 'id' in request ? request.id : undefined;
  if (id === undefined || active.length === 1) return active[0]!.id;
  const list = request.resource.startsWith('account') ? 'accounts' : 'cards';
  for (const connection of active) {
    const items = await (list === 'accounts' ? reads.accountsOf(connection.id) : reads.cardsOf(connection.id)).catch(() => []);
    if (items.some((item) => item.account_id === id)) return connection.id;
  }
  throw new NotFoundError(`No ${list === 'accounts' ? 'account' : 'card'} with that id is shown by any of this user's banks.`);
}
