import { requireAnyPrincipal } from '../platform/access/principal';
import type { OperationContext } from '../platform/graphql/operation-context';
import { NotFoundError } from '../platform/errors/gateway-errors';
import type { EventBus } from '../platform/live/event-bus';
import { liveStream } from '../platform/live/live-stream';
import { sharedMapping } from '../platform/live/shared-subscribe';
import { topics } from '../platform/live/topics';
import { validateTransactionId } from '../platform/validation/id.validator';
import { toPayout } from './payout.mapper';
import { PAYOUT_TAG, type Payout } from './payout.type';
import { providerIdOf } from '../platform/graphql/node/global-id';
import { sameOwner, type PayoutView } from './payout.model';
import { payoutReadsOf, type PayoutPublisher } from './payout.service';
import type { ClaimSignals } from './payout-claim-signals';
import { payoutLifecycle } from './payout-status';
import type { PayoutService } from './payout.service';
import type { StatusWatchers } from '../platform/scheduler/status-watcher';

/** What payoutUpdated's stream reads. */
export interface PayoutStreamDeps {
  bus: EventBus;
  payouts: Pick<PayoutService, 'recorded' | 'read'>;
  watchers: Pick<StatusWatchers<PayoutView>, 'watch'>;
}

/** Publishes payout changes on their payoutUpdated topic, where payoutStream listens. */
export function payoutPublisher(bus: Pick<EventBus, 'publish'>): PayoutPublisher {
  return { publish: (transactionId, payout) => bus.publish(topics.payout(transactionId), payout) };
}

/** Claim releases on the event bus (memory within one instance, Redis across them). */
export function busClaimSignals(bus: Pick<EventBus, 'publish' | 'listen'>): ClaimSignals {
  return {
    released: (transactionId) => bus.publish(topics.payoutClaim(transactionId), {}),
    async watch(transactionId) {
      let heard = false;
      let wake: (() => void) | undefined;
      const stop = await bus.listen(topics.payoutClaim(transactionId), () => {
        heard = true;
        wake?.();
      });
      return {
        next: (ms) =>
          new Promise<void>((resolve) => {
            if (heard) {
              heard = false;
              resolve();
              return;
            }
            const timer = setTimeout(done, ms);
            function done(): void {
              clearTimeout(timer);
              heard = false;
              wake = undefined;
              resolve();
            }
            wake = done;
          }),
        stop,
      };
    },
  };
}

// Every subscriber of an event gets the same mapped object, so sharedSubscribe executes it once for all of them.
const payoutOfEvent = sharedMapping((payout) => toPayout(payout as PayoutView));
const payoutRank = (payout: Payout): number => payoutLifecycle.rank(payout.status);
const isFinalPayout = (payout: Payout): boolean => payoutLifecycle.isFinal(payout.status);

/**
 * payoutUpdated: a session for the payouts it created (any other id is NOT_FOUND, exactly like an unknown one),
 * a merchant key for any. While the stream is open and the payout not final, the payout watcher reads it.
 * Who may watch is checked before anything is acknowledged (an error here is the subscription's GraphQL error).
 */
export function payoutStream(deps: PayoutStreamDeps) {
  return (args: { transactionId?: unknown }, context: OperationContext): Promise<AsyncIterableIterator<Payout>> =>
    streamPayout(deps, context, args.transactionId as string);
}

async function streamPayout(deps: PayoutStreamDeps, context: OperationContext, transactionIdArg: string): Promise<AsyncIterableIterator<Payout>> {
  const caller = requireAnyPrincipal(context.principal);
  const transactionId = validateTransactionId(providerIdOf(transactionIdArg, PAYOUT_TAG));
  const { bus, payouts: payoutService, watchers: payoutWatchers } = deps;
  const notFound = (): NotFoundError =>
    new NotFoundError(caller.kind === 'user' ? 'No payout with that transactionId was created by this user.' : 'No payout with that transactionId exists.');
  if (caller.kind === 'user') {
    const record = await payoutService.recorded(transactionId);
    if (!record || !sameOwner(record.owner, caller)) throw notFound();
  }
  let release: (() => void) | undefined;
  return liveStream<Payout>({
    bus,
    topic: topics.payout(transactionId),
    current: async () => {
      const found = await payoutService.read(caller, transactionId, context.callOptions(), payoutReadsOf(context));
      if (!found) throw notFound();
      const payout = toPayout(found);
      if (!isFinalPayout(payout)) release = payoutWatchers.watch(transactionId);
      return [payout];
    },
    fromEvent: (payload) => {
      const payout = payload as PayoutView;
      return payout?.transactionId?.toLowerCase() === transactionId ? payoutOfEvent(payout) : undefined;
    },
    identity: () => transactionId,
    rank: payoutRank,
    isFinal: isFinalPayout,
    onClose: () => release?.(),
    logs: context,
  });
}
