/**
 * Event topics. One topic per watched thing, so an instance subscribes (in Redis: SUBSCRIBEs) only to what its
 * own clients watch. Payloads are plain JSON (they cross Redis as text):
 * - data-task:<taskId>  a DataTaskSnapshot (never the owner's token or the task's webhook secret);
 * - refund:<paymentId>  a RefundEvent (the provider's refund as read after its webhook, with its payment id);
 * - payout:<id>         the payout as the payout watcher last read it (a PayoutView);
 * - payout-claim:<id>   an empty object: the payout's submission claim was let go (src/payouts/payout-claim-signals.ts);
 * - identity            an IdentityEvent (src/identity/identity-events.ts): a logout, a bank connected or disconnected, a revoked user.
 */
export const topics = {
  dataTask: (taskId: string): string => `data-task:${taskId}`,
  refund: (paymentId: string): string => `refund:${paymentId}`,
  payout: (transactionId: string): string => `payout:${transactionId}`,
  payoutClaim: (transactionId: string): string => `payout-claim:${transactionId}`,
  identity: 'identity',
} as const;
