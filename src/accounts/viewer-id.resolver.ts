import { Ctx, FieldResolver, ID, Resolver } from 'type-graphql';
import { USER_TAG } from '../identity';
import { requireUser, type PrincipalContext } from '../platform/access/principal';
import { toGlobalId } from '../platform/graphql/node/global-id';
import { Viewer } from './viewer.type';

@Resolver(() => Viewer)
export class ViewerIdResolver {
  /** The user's global id: node(id:) answers it with this Viewer, to this user alone. */
  @FieldResolver(() => ID)
  id(@Ctx() context: PrincipalContext): string {
    return toGlobalId(USER_TAG, requireUser(context.principal).userId);
  }

  @FieldResolver(() => ID, {
    description: "The durable user's id as the gateway stores it (what Viewer.id was before ids were global); revokeUser and reinstateUser take either.",
  })
  userId(@Ctx() context: PrincipalContext): string {
    return requireUser(context.principal).userId;
  }
}
