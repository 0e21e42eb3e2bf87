import 'reflect-metadata';
import { ArgsType, Field, ID } from 'type-graphql';

/** Mutation.disconnectBank. */
@ArgsType()
export class DisconnectBankArgs {
  @Field(() => ID, { description: 'A BankConnection.id from viewer.connections.' })
  connectionId!: string;
}
