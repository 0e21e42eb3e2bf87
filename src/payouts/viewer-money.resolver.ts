import { Ctx, FieldResolver, Resolver } from 'type-graphql';
import { requireUser } from '../identity/principal';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { Payout } from './payout.type';
import { Viewer } from '../accounts/viewer.type';
import { payoutsOf } from './payout.workflow';

/** The viewer's payouts: from the gateway's own store, not the data API, so they live apart from ViewerResolver. */
@Resolver(() => Viewer)
export class ViewerMoneyResolver {
  @FieldResolver(() => [Payout], { description: 'Payouts this user created, newest first.' })
  payouts(@Ctx() context: GatewayContext): Promise<Payout[]> {
    return payoutsOf(context, requireUser(context.principal));
  }
}
