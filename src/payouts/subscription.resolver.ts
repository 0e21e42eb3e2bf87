import { Args, Resolver, Root, Subscription } from 'type-graphql';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { RefundUpdatedArgs } from '../refunds/refund-updated.args';
import { Refund } from '../refunds/refund.type';
import { refundStream } from './live.streams';

/** Subscription.refundUpdated (payoutUpdated lives with the payout's resolver, dataTaskUpdated with the data task's). */
@Resolver()
export class SubscriptionResolver {
  @Subscription(() => Refund, {
    description: 'Every status change of the refunds of a payment (one refund when refundId is given). Needs a merchant key.',
    subscribe: ({ args, context }) => refundStream(context as GatewayContext, args as RefundUpdatedArgs),
  })
  refundUpdated(@Root() refund: Refund, @Args() _args: RefundUpdatedArgs): Refund {
    return refund;
  }
}
