import type { SubscriptionStream } from '../platform/graphql/build-schema';
import type { OperationContext } from '../platform/graphql/operation-context';
import type { Features } from './features';

/** Each Subscription field's stream, as its feature made it with the dependencies it reads. */
export function subscriptionStreams(features: Pick<Features, 'payouts' | 'refunds' | 'dataTasks'>): Record<string, SubscriptionStream<OperationContext>> {
  return {
    payoutUpdated: features.payouts.stream,
    refundUpdated: features.refunds.stream,
    dataTaskUpdated: features.dataTasks.stream,
  };
}
