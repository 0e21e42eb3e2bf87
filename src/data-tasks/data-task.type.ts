import 'reflect-metadata';
import { Account, AccountBalance, Card, CardBalance, Transaction } from '../accounts';
import { Field, ID, ObjectType } from 'type-graphql';
import { toGlobalId } from '../platform/graphql/node/global-id';
import { Node } from '../platform/graphql/node/node.type';
import { DataResource } from './data-resource.enum';
import { DataTaskStatus } from './data-task-status.enum';
import { DateTimeScalar } from '../platform/graphql/scalars/date-time.scalar';

/** The global id's tag of a data task: `dt`, then the task's id. */
export const DATA_TASK_TAG = 'dt';

@ObjectType({ simpleResolvers: true, implements: Node })
export class DataTask implements Node {
  @Field(() => ID)
  get id(): string {
    return toGlobalId(DATA_TASK_TAG, this.taskId);
  }

  @Field(() => ID, { description: "The task's own id (what DataTask.id was before ids were global; dataTask and dataTaskUpdated still take it)." })
  taskId!: string;

  @Field(() => DataResource)
  resource!: DataResource;

  @Field(() => DataTaskStatus)
  status!: DataTaskStatus;

  @Field(() => DateTimeScalar)
  createdAt!: string;

  @Field(() => DateTimeScalar, { nullable: true })
  completedAt?: string | null;

  // The result fields are fetched from the provider's results endpoint by @FieldResolver methods of the data task
  // resolver once the task has succeeded; a task record itself holds none of them.

  @Field(() => [Account], {
    nullable: true,
    description: 'Set once SUCCEEDED, for the matching resource; null otherwise.',
  })
  accounts?: Account[] | null;

  @Field(() => [Card], { nullable: true })
  cards?: Card[] | null;

  @Field(() => [Transaction], { nullable: true })
  transactions?: Transaction[] | null;

  @Field(() => AccountBalance, { nullable: true })
  accountBalance?: AccountBalance | null;

  @Field(() => CardBalance, { nullable: true })
  cardBalance?: CardBalance | null;
}
