import 'reflect-metadata';
import { ArgsType, Field, ID } from 'type-graphql';

@ArgsType()
export class DeclinePayoutArgs {
  @Field(() => ID)
  transactionId!: string;

  @Field(() => String, { description: 'Why it was declined, 1 to 200 characters; kept with the payout for support.' })
  reason!: string;
}
