import type { PayoutClient } from '../datasources/payout.client';
import type { ProviderWithdrawal } from '../datasources/provider-types';
import type { Logger } from '../logger';
import type { Telemetry } from '../telemetry/telemetry';
import type { EventBus } from './event-bus';
import type { Leases } from './lease';
import { topics } from './topics';
import { FINAL_PAYOUT_STATUSES } from '../payouts/payout-status';
import { DEFAULT_STATUS_WATCH, StatusWatchers, type StatusWatchSettings } from './status-watcher';

/**
 * The provider sends no payout notifications, so payoutUpdated is fed by reading GET /v1/withdrawals/{id} while
 * anyone watches (StatusWatchers: one reader across instances, backing off while nothing changes), publishing the
 * withdrawal whenever it differs from the last read, and stopping at a final status.
 */
export class PayoutWatchers extends StatusWatchers<ProviderWithdrawal> {
  constructor(payouts: PayoutClient, bus: EventBus, leases: Leases, logger: Logger, settings: StatusWatchSettings = DEFAULT_STATUS_WATCH, telemetry?: Telemetry) {
    super(
      {
        kind: 'payout',
        idField: 'transactionId',
        read: (transactionId) => payouts.getWithdrawal(transactionId),
        async publishChanges(transactionId, withdrawal, previous) {
          if (previous !== undefined && JSON.stringify(previous) === JSON.stringify(withdrawal)) return false;
          await bus.publish(topics.payout(transactionId), withdrawal);
          return true;
        },
        isFinal: (withdrawal) => FINAL_PAYOUT_STATUSES.has(withdrawal.status),
      },
      bus,
      leases,
      logger,
      settings,
      telemetry,
    );
  }
}
