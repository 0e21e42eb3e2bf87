import 'reflect-metadata';
import { ArgsType, Field, ID } from 'type-graphql';

/** Mutation.reinstateUser. */
@ArgsType()
export class ReinstateUserArgs {
  @Field(() => ID, { description: 'The revoked user to let back in: Viewer.id as their own queries showed it.' })
  userId!: string;
}
