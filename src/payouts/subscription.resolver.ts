import { Args, Resolver, Root, Subscription } from 'type-graphql';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { PayoutArgs } from './payout.args';
import { Payout } from './payout.type';
import { RefundUpdatedArgs } from '../refunds/refund-updated.args';
import { Refund } from '../refunds/refund.type';
import { payoutStream, refundStream } from './live.streams';

/** Subscription.refundUpdated and payoutUpdated (dataTaskUpdated lives with the data task's resolver). */
@Resolver()
export class SubscriptionResolver {
  @Subscription(() => Refund, {
    description: 'Every status change of the refunds of a payment (one refund when refundId is given). Needs a merchant key.',
    subscribe: ({ args, context }) => refundStream(context as GatewayContext, args as RefundUpdatedArgs),
  })
  refundUpdated(@Root() refund: Refund, @Args() _args: RefundUpdatedArgs): Refund {
    return refund;
  }

  @Subscription(() => Payout, {
    description: 'Every status change of a payout.',
    subscribe: ({ args, context }) => payoutStream(context as GatewayContext, (args as PayoutArgs).transactionId),
  })
  payoutUpdated(@Root() payout: Payout, @Args() _args: PayoutArgs): Payout {
    return payout;
  }
}
