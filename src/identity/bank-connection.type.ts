import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';
import { toGlobalId } from '../platform/graphql/node/global-id';
import { Node } from '../platform/graphql/node/node.type';
import { ConnectionStatus } from './connection-status.enum';

/**
 * One bank the user connected (one authorization-code grant). Its `accounts` and `cards` fields are declared by the
 * accounts module's resolver alone (Account and Card lead back here, and identity knows nothing of accounts): null
 * with an error at their path when this bank fails.
 */
/** The global id's tag of a bank connection: `bc`, then the gateway's connection id. */
export const BANK_CONNECTION_TAG = 'bc';
/** The global id's tag of a user (Viewer): `u`, then the durable user's id. */
export const USER_TAG = 'u';

@ObjectType({ simpleResolvers: true, implements: Node })
export class BankConnection implements Node {
  @Field(() => ID)
  get id(): string {
    return toGlobalId(BANK_CONNECTION_TAG, this.connectionId);
  }

  @Field(() => ID, {
    description: "The gateway's connection id (what BankConnection.id was before ids were global; disconnectBank and startDataTask still take it).",
  })
  connectionId!: string;

  @Field(() => ID, { description: "The bank's provider id, as on Account.provider." })
  providerId!: string;

  @Field(() => ConnectionStatus)
  status!: ConnectionStatus;
}
