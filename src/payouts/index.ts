/** The payouts module: what the rest of the gateway may use of it. */
import { PayoutResolver } from './payout.resolver';
import type { PayoutService } from './payout.service';
import { ViewerMoneyResolver } from './viewer-money.resolver';

export { PayoutService, type PayoutPublisher, type PayoutServiceDeps } from './payout.service';
export { PayoutStore, type PayoutRecord } from './payout.store';
export type { PayoutOwner, PayoutView } from './payout.model';
export type { VerifiedBeneficiaries } from './payout-approval';
export { payoutPasses, type PayoutPassDeps } from './payout.job';
export { payoutWatch } from './payout-watch.job';
export { busClaimSignals, payoutPublisher } from './payout.stream';
export { PayoutResolver, ViewerMoneyResolver };
export { Payout, PAYOUT_TAG } from './payout.type';
export { payoutNodeType } from './payout-node.resolver';
export { CreatePayoutInput } from './create-payout.input';

/** The payout resolvers, given the service they call (for the gateway's resolver container). */
export function payoutResolvers(payouts: PayoutService): object[] {
  return [new PayoutResolver(payouts), new ViewerMoneyResolver(payouts)];
}
export { PAYOUT_STREAM_SOURCES } from './payout.stream';
