import { Args, Ctx, Mutation, Resolver } from 'type-graphql';
import { providerIdOf } from '../platform/graphql/node/global-id';
import { USER_TAG } from './bank-connection.type';
import { requireMerchant, type PrincipalContext } from '../platform/access/principal';
import type { IdentityService } from './identity.service';
import { ReinstateUserArgs } from './reinstate-user.args';
import { RevokeUserArgs } from './revoke-user.args';

@Resolver()
export class UserResolver {
  constructor(private readonly identity: IdentityService) {}

  @Mutation(() => Boolean, {
    description:
      'Revokes a user (the app closed their account): their sessions, bank connections and open subscriptions end on every instance. Needs a merchant key.',
  })
  async revokeUser(@Args() { userId }: RevokeUserArgs, @Ctx() context: PrincipalContext): Promise<boolean> {
    requireMerchant(context.principal);
    await this.identity.revokeUser(providerIdOf(userId, USER_TAG));
    return true;
  }

  @Mutation(() => Boolean, {
    description:
      "Lifts a user's revocation: their bank logins sign in to their user again (until then a revoked user's login is refused, never made a new user), and in app identity their access tokens are accepted again. Ended sessions and bank connections stay ended: the user signs in again. Needs a merchant key.",
  })
  async reinstateUser(@Args() { userId }: ReinstateUserArgs, @Ctx() context: PrincipalContext): Promise<boolean> {
    requireMerchant(context.principal);
    await this.identity.reinstateUser(providerIdOf(userId, USER_TAG));
    return true;
  }
}
