import { Ctx, FieldResolver, ID, Resolver } from 'type-graphql';
import { requireUser, type PrincipalContext } from '../platform/access/principal';
import { Viewer } from './viewer.type';

@Resolver(() => Viewer)
export class ViewerIdResolver {
  @FieldResolver(() => ID)
  id(@Ctx() context: PrincipalContext): string {
    return requireUser(context.principal).userId;
  }
}
