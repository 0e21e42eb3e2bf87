import 'reflect-metadata';
import { ArgsType, Field, ID } from 'type-graphql';

/** Mutation.revokeUser. */
@ArgsType()
export class RevokeUserArgs {
  @Field(() => ID, { description: 'The user to revoke: Viewer.id as their own queries show it.' })
  userId!: string;
}
