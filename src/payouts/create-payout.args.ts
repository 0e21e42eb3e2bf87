import 'reflect-metadata';
import { ArgsType, Field } from 'type-graphql';
import { CreatePayoutInput } from './create-payout.input';

/** Mutation.createPayout. */
@ArgsType()
export class CreatePayoutArgs {
  @Field(() => CreatePayoutInput)
  input!: CreatePayoutInput;
}
