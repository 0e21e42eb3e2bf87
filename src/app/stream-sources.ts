import { DATA_TASK_STREAM_SOURCES } from '../data-tasks';
import { PAYOUT_STREAM_SOURCES } from '../payouts';
import { Sources } from '../platform/graphql/operation-context';
import { REFUND_STREAM_SOURCES } from '../refunds';
import type { Services } from './services';

/** What the subscriptions' streams read, each under its feature's key. */
export function streamSources(services: Services): Sources {
  const { live } = services;
  return new Sources()
    .provide(PAYOUT_STREAM_SOURCES, { bus: live.bus, payoutService: services.payoutService, payoutWatchers: services.payoutWatchers })
    .provide(REFUND_STREAM_SOURCES, { bus: live.bus, refunds: services.refunds, refundWatchers: live.refundWatchers, refundReads: live.refundReads })
    .provide(DATA_TASK_STREAM_SOURCES, { dataTasks: live.dataTasks, bus: live.bus });
}
