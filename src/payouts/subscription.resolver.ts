import { Args, Resolver, Root, Subscription } from 'type-graphql';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { PayoutArgs } from './payout.args';
import { Payout } from './payout.type';
import { payoutStream } from './live.streams';

/** Subscription.payoutUpdated (refundUpdated lives with the refund's resolver, dataTaskUpdated with the data task's). */
@Resolver()
export class SubscriptionResolver {
  @Subscription(() => Payout, {
    description: 'Every status change of a payout.',
    subscribe: ({ args, context }) => payoutStream(context as GatewayContext, (args as PayoutArgs).transactionId),
  })
  payoutUpdated(@Root() payout: Payout, @Args() _args: PayoutArgs): Payout {
    return payout;
  }
}
