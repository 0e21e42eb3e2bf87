import type { ProviderWithdrawal } from '../platform/provider/provider-types';
import type { WatchedStatus } from '../platform/scheduler/status-watcher';
import type { PayoutService } from './payout.service';
import { FINAL_PAYOUT_STATUSES } from './payout-status';

/**
 * The payout watcher, the fast path of payoutUpdated: the provider sends no payout notifications, so while anyone
 * watches a payout the scheduler reads it (one reader across instances, backing off while nothing changes) through
 * PayoutService.refresh, which stores a recorded payout's move in the ledger; the withdrawal is then published
 * whenever it differs from the last read, and the watch stops at a final status. `topic` is payoutUpdated's.
 */
export function payoutWatch(payouts: Pick<PayoutService, 'refresh'>, topic: (transactionId: string) => string): WatchedStatus<ProviderWithdrawal> {
  return {
    kind: 'payout',
    idField: 'transactionId',
    topic,
    read: (transactionId) => payouts.refresh(transactionId, {}),
    changes: (_id, withdrawal, previous) => (previous !== undefined && JSON.stringify(previous) === JSON.stringify(withdrawal) ? [] : [withdrawal]),
    isFinal: (withdrawal) => FINAL_PAYOUT_STATUSES.has(withdrawal.status),
  };
}
