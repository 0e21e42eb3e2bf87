import { Args, Ctx, FieldResolver, ID, Mutation, Resolver } from 'type-graphql';
import { requireMerchant, requireUser } from './principal';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { NotFoundError } from '../platform/errors/gateway-errors';
import { ReinstateUserArgs } from './reinstate-user.args';
import { RevokeUserArgs } from './revoke-user.args';
import { Viewer } from '../accounts/viewer.type';

@Resolver(() => Viewer)
export class UserResolver {
  @FieldResolver(() => ID)
  id(@Ctx() context: GatewayContext): string {
    return requireUser(context.principal).userId;
  }

  @Mutation(() => Boolean, {
    description:
      'Revokes a user (the app closed their account): their sessions, bank connections and open subscriptions end on every instance. Needs a merchant key.',
  })
  async revokeUser(@Args() { userId }: RevokeUserArgs, @Ctx() context: GatewayContext): Promise<boolean> {
    requireMerchant(context.principal);
    if (!(await context.services.connections.revokeUser(userId))) throw new NotFoundError('No user with that id exists.');
    await context.services.live.dataTasks.forgetUser(userId);
    await context.services.identityEvents.publish({ kind: 'user-revoked', userId });
    return true;
  }

  @Mutation(() => Boolean, {
    description:
      "Lifts a user's revocation: their bank logins sign in to their user again (until then a revoked user's login is refused, never made a new user), and in app identity their access tokens are accepted again. Ended sessions and bank connections stay ended: the user signs in again. Needs a merchant key.",
  })
  async reinstateUser(@Args() { userId }: ReinstateUserArgs, @Ctx() context: GatewayContext): Promise<boolean> {
    requireMerchant(context.principal);
    if (!(await context.services.connections.reinstateUser(userId))) throw new NotFoundError('No user with that id exists.');
    return true;
  }
}
