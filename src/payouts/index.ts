/** The payouts module: what the rest of the gateway may use of it. */
import type { MoneyConfig } from '../platform/config/config';
import type { Database } from '../platform/db/database';
import type { EventBus } from '../platform/live/event-bus';
import { topics } from '../platform/live/topics';
import type { Logger } from '../platform/observability/logger';
import type { PayoutClient } from '../platform/provider/payout.client';
import type { PassJob, Scheduler } from '../platform/scheduler/scheduler';
import type { StatusWatchers, StatusWatchSettings } from '../platform/scheduler/status-watcher';
import type { VerifiedBeneficiaries } from './payout-approval';
import { payoutWatch } from './payout-watch.job';
import { payoutPasses } from './payout.job';
import { PayoutResolver } from './payout.resolver';
import { PayoutService, type PayoutMetrics } from './payout.service';
import { PayoutStore } from './payout.store';
import { busClaimSignals, payoutPublisher, payoutStream } from './payout.stream';
import type { PayoutView } from './payout.model';
import { ViewerMoneyResolver } from './viewer-money.resolver';

export { PayoutService, type PayoutPublisher, type PayoutServiceDeps } from './payout.service';
export { PayoutStore, type PayoutRecord } from './payout.store';
export type { PayoutOwner, PayoutView } from './payout.model';
export type { VerifiedBeneficiaries } from './payout-approval';
export { payoutWatch } from './payout-watch.job';
export { PayoutResolver, ViewerMoneyResolver };
export { Payout, PAYOUT_TAG } from './payout.type';
export { payoutNodeType } from './payout-node.resolver';
export { CreatePayoutInput } from './create-payout.input';

/** The payout resolvers, given the service they call (for the gateway's resolver container). */
export function payoutResolvers(payouts: PayoutService): object[] {
  return [new PayoutResolver(payouts), new ViewerMoneyResolver(payouts)];
}

export interface PayoutsDeps {
  database: Database;
  provider: PayoutClient;
  beneficiaries: VerifiedBeneficiaries;
  /** Where payoutUpdated's events are published and heard. */
  bus: EventBus;
  /** Epoch ms: windows, claims and expiries are measured on it. */
  clock: () => number;
  logger: Logger;
  settings: MoneyConfig;
  metrics?: PayoutMetrics;
  /** Runs the payout watches. */
  scheduler: Pick<Scheduler, 'watches'>;
  watchSettings: StatusWatchSettings;
}

/** The payouts feature's parts: the ledger, the service, the watches, payoutUpdated's stream and the passes. */
export interface Payouts {
  ledger: PayoutStore;
  service: PayoutService;
  /** Reads the payouts that payoutUpdated subscribers watch. */
  watchers: StatusWatchers<PayoutView>;
  stream: ReturnType<typeof payoutStream>;
  /** Its periodic passes, for the scheduler. */
  passes: PassJob[];
}

export function createPayouts(deps: PayoutsDeps): Payouts {
  const { bus, settings } = deps;
  const ledger = new PayoutStore(deps.database, deps.clock);
  const service = new PayoutService({
    provider: deps.provider,
    ledger,
    beneficiaries: deps.beneficiaries,
    events: payoutPublisher(bus),
    claims: busClaimSignals(bus),
    clock: deps.clock,
    logger: deps.logger,
    settings,
    metrics: deps.metrics,
  });
  const watchers = deps.scheduler.watches(payoutWatch(service, topics.payout), deps.watchSettings);
  return {
    ledger,
    service,
    watchers,
    stream: payoutStream({ bus, payouts: service, watchers }),
    passes: payoutPasses({ payouts: service, ledger, approvalExpiryMs: settings.payoutApprovalExpiryMs }),
  };
}
