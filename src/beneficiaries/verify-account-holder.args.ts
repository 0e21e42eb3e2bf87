import 'reflect-metadata';
import { ArgsType, Field } from 'type-graphql';

/** Mutation.verifyAccountHolder. */
@ArgsType()
export class VerifyAccountHolderArgs {
  @Field(() => String)
  name!: string;
}
