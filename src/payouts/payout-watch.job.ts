import type { WatchedStatus } from '../platform/scheduler/status-watcher';
import type { PayoutService } from './payout.service';
import type { PayoutView } from './payout.model';
import { payoutLifecycle } from './payout-status';

/**
 * The payout watcher, the fast path of payoutUpdated: the provider sends no payout notifications, so while anyone
 * watches a payout the scheduler reads it (one reader across instances, backing off while nothing changes) through
 * PayoutService.refresh, which stores a recorded payout's move in the ledger; the payout is then published
 * whenever it differs from the last read, and the watch stops at a final status. `topic` is payoutUpdated's.
 */
export function payoutWatch(payouts: Pick<PayoutService, 'refresh'>, topic: (transactionId: string) => string): WatchedStatus<PayoutView> {
  return {
    kind: 'payout',
    idField: 'transactionId',
    topic,
    read: (transactionId) => payouts.refresh(transactionId, {}),
    changes: (_id, payout, previous) => (previous !== undefined && JSON.stringify(previous) === JSON.stringify(payout) ? [] : [payout]),
    isFinal: (payout) => payoutLifecycle.isFinal(payout.status),
  };
}
