import { Ctx, FieldResolver, Resolver } from 'type-graphql';
import { requireUser } from '../platform/access/principal';
import type { OperationContext } from '../platform/graphql/operation-context';
import { Payout } from './payout.type';
import { Viewer } from '../accounts';
import { toPayout } from './payout.mapper';
import { payoutReadsOf, type PayoutService } from './payout.service';

/** The viewer's payouts: from the gateway's own store, not the data API, so they live apart from ViewerResolver. */
@Resolver(() => Viewer)
export class ViewerMoneyResolver {
  constructor(private readonly service: PayoutService) {}

  @FieldResolver(() => [Payout], { description: 'Payouts this user created, newest first.' })
  async payouts(@Ctx() context: OperationContext): Promise<Payout[]> {
    const user = requireUser(context.principal);
    return (await this.service.listForUser(user.userId, context.callOptions(), payoutReadsOf(context))).map(toPayout);
  }
}
