/** The payouts module: what the rest of the gateway may use of it. */
export { PayoutService, type PayoutCaller, type PayoutPublisher, type PayoutServiceDeps } from './payout.service';
export { PayoutLedger, type PayoutOwner, type PayoutRecord } from './payout.store';
export type { VerifiedBeneficiaries } from './payout-approval';
export { payoutPasses, type PayoutPassDeps } from './payout.job';
export { payoutWatch } from './payout-watch.job';
export { payoutPublisher } from './payout.stream';
export { PayoutResolver } from './payout.resolver';
export { ViewerMoneyResolver } from './viewer-money.resolver';
export { SubscriptionResolver } from './subscription.resolver';
export { Payout } from './payout.type';
export { CreatePayoutInput } from './create-payout.input';
