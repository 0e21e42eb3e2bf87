import 'reflect-metadata';
import { ArgsType, Field, ID } from 'type-graphql';

/** Query.payout and Subscription.payoutUpdated. */
@ArgsType()
export class PayoutArgs {
  @Field(() => ID)
  transactionId!: string;
}
