import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';
import { ConnectionStatus } from './connection-status.enum';

/**
 * One bank the user connected (one authorization-code grant). Its `accounts` and `cards` fields are declared by the
 * accounts module's resolver alone (Account and Card lead back here, and identity knows nothing of accounts): null
 * with an error at their path when this bank fails.
 */
@ObjectType({ simpleResolvers: true })
export class BankConnection {
  @Field(() => ID)
  id!: string;

  @Field(() => ID, { description: "The bank's provider id, as on Account.provider." })
  providerId!: string;

  @Field(() => ConnectionStatus)
  status!: ConnectionStatus;
}
