import { Args, Ctx, FieldResolver, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { toAccount, toAccountBalance } from '../accounts/account.mapper';
import { toCard, toCardBalance } from '../accounts/card.mapper';
import { toTransaction } from '../accounts/transaction.mapper';
import type { ProviderAccount, ProviderAccountBalance, ProviderCard, ProviderCardBalance, ProviderTransaction } from '../platform/provider/provider-types';
import type { AccountBalance } from '../accounts/account-balance.type';
import type { Account } from '../accounts/account.type';
import type { CardBalance } from '../accounts/card-balance.type';
import type { Card } from '../accounts/card.type';
import { DataResource } from './data-resource.enum';
import { DataTaskStatus } from './data-task-status.enum';
import { DataTask } from './data-task.type';
import { IdArgs } from '../platform/graphql/types/id.args';
import { StartDataTaskArgs } from './start-data-task.args';
import type { Transaction } from '../accounts/transaction.type';
import { toDataTask, toDataTaskSnapshot, type DataTaskSnapshot } from './data-task.snapshot';
import { findOwnTask, startDataTask } from './data-tasks';
import { dataTaskStream } from '../payouts/live.streams';

@Resolver(() => DataTask)
export class DataTaskResolver {
  @Mutation(() => DataTask, { description: 'Starts an asynchronous data fetch; the result arrives later through dataTaskUpdated or dataTask.' })
  async startDataTask(@Args() { input }: StartDataTaskArgs, @Ctx() context: GatewayContext): Promise<DataTask> {
    return toDataTask(toDataTaskSnapshot(await startDataTask(context, input)));
  }

  /** Another user's task reads as null, exactly like an unknown id. */
  @Query(() => DataTask, { nullable: true, description: 'An asynchronous data task started by this session.' })
  async dataTask(@Args() { id }: IdArgs, @Ctx() context: GatewayContext): Promise<DataTask | null> {
    const task = await findOwnTask(context, id);
    return task ? toDataTask(toDataTaskSnapshot(task)) : null;
  }

  @Subscription(() => DataTask, {
    description: 'Every status change of a data task; once SUCCEEDED its result fields resolve.',
    subscribe: ({ args, context }) => dataTaskStream(context as GatewayContext, (args as IdArgs).id),
  })
  dataTaskUpdated(@Root() snapshot: DataTaskSnapshot, @Args() _args: IdArgs): DataTask {
    return toDataTask(snapshot);
  }

  @FieldResolver()
  async accounts(@Root() task: DataTask, @Ctx() context: GatewayContext): Promise<Account[] | null> {
    const found = await resultsFor<ProviderAccount>(task, context, [DataResource.ACCOUNTS]);
    return found && found.results.map((account) => toAccount(account, found.connectionId));
  }

  @FieldResolver()
  async cards(@Root() task: DataTask, @Ctx() context: GatewayContext): Promise<Card[] | null> {
    const found = await resultsFor<ProviderCard>(task, context, [DataResource.CARDS]);
    return found && found.results.map((card) => toCard(card, found.connectionId));
  }

  @FieldResolver()
  async transactions(@Root() task: DataTask, @Ctx() context: GatewayContext): Promise<Transaction[] | null> {
    const found = await resultsFor<ProviderTransaction>(task, context, [DataResource.ACCOUNT_TRANSACTIONS, DataResource.CARD_TRANSACTIONS]);
    return found && found.results.map(toTransaction);
  }

  @FieldResolver()
  async accountBalance(@Root() task: DataTask, @Ctx() context: GatewayContext): Promise<AccountBalance | null> {
    const [balance] = (await resultsFor<ProviderAccountBalance>(task, context, [DataResource.ACCOUNT_BALANCE]))?.results ?? [];
    return balance ? toAccountBalance(balance) : null;
  }

  @FieldResolver()
  async cardBalance(@Root() task: DataTask, @Ctx() context: GatewayContext): Promise<CardBalance | null> {
    const [balance] = (await resultsFor<ProviderCardBalance>(task, context, [DataResource.CARD_BALANCE]))?.results ?? [];
    return balance ? toCardBalance(balance) : null;
  }
}

/** The task's results when it has succeeded and the field matches its resource; null otherwise, with no call. */
async function resultsFor<T>(task: DataTask, context: GatewayContext, resources: DataResource[]): Promise<{ connectionId: string; results: T[] } | null> {
  if (task.status !== DataTaskStatus.SUCCEEDED || !resources.includes(task.resource)) return null;
  return (await context.services.live.dataTaskResults.get(context, task)) as { connectionId: string; results: T[] };
}
