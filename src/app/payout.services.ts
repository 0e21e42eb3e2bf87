import { busClaimSignals, PayoutService, PayoutStore, payoutPublisher, payoutWatch, type PayoutView, type VerifiedBeneficiaries } from '../payouts';
import type { ResolvedConfig } from '../platform/config/config';
import type { Database } from '../platform/db/database';
import { topics } from '../platform/live/topics';
import type { GatewayMetrics } from '../platform/observability/gateway-metrics';
import type { Logger } from '../platform/observability/logger';
import type { PayoutClient } from '../platform/provider/payout.client';
import type { StatusWatchers, StatusWatchSettings } from '../platform/scheduler/status-watcher';
import { DEFAULT_LIVE_SETTINGS, type LiveServices } from './live.services';

/** What the payouts module is built from. */
interface PayoutParts {
  config: ResolvedConfig;
  logger: Logger;
  database: Database;
  payouts: PayoutClient;
  beneficiaries: VerifiedBeneficiaries;
  live: LiveServices;
  metrics: GatewayMetrics;
  /** The ledger's clock (default Date.now). */
  clock?: () => number;
  watch?: StatusWatchSettings;
}

export interface PayoutServices {
  payoutLedger: PayoutStore;
  payoutService: PayoutService;
  payoutWatchers: StatusWatchers<PayoutView>;
}

/** The payout ledger, the payout service (publishing on payoutUpdated's topic) and its watches on the scheduler. */
export function createPayoutServices(parts: PayoutParts): PayoutServices {
  const { config, logger, database, payouts, beneficiaries, live, metrics } = parts;
  const payoutLedger = new PayoutStore(database, parts.clock);
  const payoutService = new PayoutService({
    provider: payouts,
    ledger: payoutLedger,
    beneficiaries,
    events: payoutPublisher(live.bus),
    claims: busClaimSignals(live.bus),
    clock: payoutLedger.now,
    logger,
    settings: config.money,
    metrics,
  });
  const payoutWatchers = live.scheduler.watches(payoutWatch(payoutService, topics.payout), parts.watch ?? DEFAULT_LIVE_SETTINGS.payoutWatch);
  return { payoutLedger, payoutService, payoutWatchers };
}
