import 'reflect-metadata';
import { ArgsType, Field, ID } from 'type-graphql';

/** Subscription.refundUpdated. */
@ArgsType()
export class RefundUpdatedArgs {
  @Field(() => ID)
  paymentId!: string;

  @Field(() => ID, { nullable: true })
  refundId?: string | null;
}
