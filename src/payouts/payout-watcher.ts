import type { PayoutClient } from '../platform/provider/payout.client';
import type { ProviderWithdrawal } from '../platform/provider/provider-types';
import { topics } from '../platform/live/topics';
import { FINAL_PAYOUT_STATUSES } from './payout-status';
import { StatusWatchers, type StatusWatchDeps, type StatusWatchSettings, type WatchedStatus } from '../platform/scheduler/status-watcher';

const PAYOUT_STATUS: Omit<WatchedStatus<ProviderWithdrawal>, 'read'> = {
  kind: 'payout',
  idField: 'transactionId',
  topic: topics.payout,
  changes: (_id, withdrawal, previous) => (previous !== undefined && JSON.stringify(previous) === JSON.stringify(withdrawal) ? [] : [withdrawal]),
  isFinal: (withdrawal) => FINAL_PAYOUT_STATUSES.has(withdrawal.status),
};

/**
 * The provider sends no payout notifications, so payoutUpdated is fed by reading GET /v1/withdrawals/{id} while
 * anyone watches (StatusWatchers: one reader across instances, backing off while nothing changes), publishing the
 * withdrawal whenever it differs from the last read, and stopping at a final status.
 */
export class PayoutWatchers extends StatusWatchers<ProviderWithdrawal> {
  constructor(payouts: PayoutClient, deps: StatusWatchDeps, settings?: StatusWatchSettings) {
    super({ ...PAYOUT_STATUS, read: (transactionId) => payouts.getWithdrawal(transactionId) }, deps, settings);
  }
}
