import 'reflect-metadata';
import { ArgsType, Field, ID } from 'type-graphql';

/** Query.payment, Query.dataTask, Subscription.dataTaskUpdated, Viewer.account and Viewer.card. */
@ArgsType()
export class IdArgs {
  @Field(() => ID)
  id!: string;
}
