import { PayoutService, payoutWatch, type PayoutStore, type PayoutView } from '../../src/payouts';
import type { MoneyConfig } from '../../src/platform/config/config';
import { topics } from '../../src/platform/live/topics';
import type { PayoutClient } from '../../src/platform/provider/payout.client';
import { StatusWatchers, type StatusWatchDeps, type StatusWatchSettings } from '../../src/platform/scheduler/status-watcher';
import { DEFAULT_STATUS_WATCH } from './config-defaults';

/** The scheduler's payout watches over `provider`, for payouts the gateway never recorded (the ledger is empty). */
export function payoutWatchers(
  provider: PayoutClient,
  deps: StatusWatchDeps,
  settings: StatusWatchSettings = DEFAULT_STATUS_WATCH,
): StatusWatchers<PayoutView> {
  const service = new PayoutService({
    provider,
    ledger: { get: async () => undefined } as unknown as PayoutStore,
    beneficiaries: { findForUser: async () => undefined, holdersOf: async () => [] },
    events: { publish: async () => undefined },
    clock: Date.now,
    logger: deps.logger,
    settings: {} as MoneyConfig,
  });
  return new StatusWatchers(payoutWatch(service, topics.payout), deps, settings);
}
