import { requireMerchant } from '../platform/access/principal';
import type { OperationContext } from '../platform/graphql/operation-context';
import type { EventBus } from '../platform/live/event-bus';
import type { CoalescedReads } from '../platform/live/coalesced-reads';
import type { RefundService } from './refund.service';
import type { ProviderRefund } from '../platform/provider/provider-types';
import type { StatusWatchers } from '../platform/scheduler/status-watcher';
import { NotFoundError } from '../platform/errors/gateway-errors';
import { validatePaymentId } from '../platform/validation/id.validator';
import { InputProblems } from '../platform/validation/input-problems';
import { isUuid, shown } from '../platform/validation/text-rules';
import { sharedMapping } from '../platform/live/shared-subscribe';
import { liveStream } from '../platform/live/live-stream';
import { topics } from '../platform/live/topics';
import { refundFromProvider, refundLifecycle, type RefundEvent } from './refund.model';
import { toRefund } from './refund.mapper';
import { REFUND_TAG, type Refund } from './refund.type';
import { PAYMENT_TAG } from './payment.type';
import { globalIdParts, providerIdOf } from '../platform/graphql/node/global-id';

// Every subscriber of an event gets the same mapped object, so sharedSubscribe executes it once for all of them.
const refundOfEvent = sharedMapping((event) => toRefund(refundFromProvider((event as RefundEvent).refund, (event as RefundEvent).paymentId)));

/** What refundUpdated's stream reads. */
export interface RefundStreamDeps {
  bus: EventBus;
  refunds: Pick<RefundService, 'getRefund' | 'refundsOfPayment'>;
  watchers: Pick<StatusWatchers<ProviderRefund[]>, 'watch'>;
  reads: CoalescedReads<Refund[] | null>;
}

const refundIdentity = (refund: Refund): string => refund.refundId.toLowerCase();
const refundRank = (refund: Refund): number => refundLifecycle.rank(refund.status);
const isFinalRefund = (refund: Refund): boolean => refundLifecycle.isFinal(refund.status);

/**
 * refundUpdated: merchant keys only. The current state is every refund of the payment (oldest first), or the one
 * refund asked for; then each change: a refund made through any instance, its authorization as the refund watcher
 * reads it, its end as the provider's refund webhooks report it. With a refundId the stream ends once that refund
 * is EXECUTED or FAILED; for a whole payment it stays open (new refunds may come), and so does its watch.
 */
export function refundStream(deps: RefundStreamDeps) {
  return (args: Record<string, unknown>, context: OperationContext): Promise<AsyncIterableIterator<Refund>> =>
    streamRefunds(deps, context, args as { paymentId: string; refundId?: string | null });
}

async function streamRefunds(
  deps: RefundStreamDeps,
  context: OperationContext,
  args: { paymentId: string; refundId?: string | null },
): Promise<AsyncIterableIterator<Refund>> {
  requireMerchant(context.principal);
  const paymentId = validatePaymentId(providerIdOf(args.paymentId, PAYMENT_TAG), 'paymentId');
  let refundId: string | undefined;
  if (args.refundId !== undefined && args.refundId !== null) {
    // A Refund.id names its payment too: one of another payment is refused like any id that is not this payment's.
    const global = globalIdParts(args.refundId, REFUND_TAG, 2);
    const given = global?.[1] ?? args.refundId;
    if (!isUuid(given) || (global !== undefined && global[0]!.toLowerCase() !== paymentId)) {
      const problems = new InputProblems();
      problems.add('refundId', `must be a refund id of this payment: Refund.id, or the provider's refund id (a UUID); got ${shown(args.refundId)}`);
      problems.throwIfAny();
    }
    refundId = given.toLowerCase();
  }
  const { bus, refunds, watchers: refundWatchers, reads: refundReads } = deps;
  let release: (() => void) | undefined;
  return liveStream<Refund>({
    bus,
    topic: topics.refund(paymentId),
    current: async () => {
      if (refundId !== undefined) {
        const refund = await refunds.getRefund(paymentId, refundId, context.callOptions());
        if (!refundLifecycle.isFinal(refund.status)) release = refundWatchers.watch(paymentId);
        return [toRefund(refund)];
      }
      const read = await refundReads.read(paymentId, async () => (await refunds.refundsOfPayment(paymentId, context.callOptions()))?.map(toRefund) ?? null);
      if (read === null) throw new NotFoundError('No payment with that id exists at the provider.');
      release = refundWatchers.watch(paymentId);
      return read;
    },
    fromEvent: (payload) => {
      const event = payload as RefundEvent;
      if (event?.paymentId !== paymentId || typeof event.refund?.id !== 'string') return undefined;
      if (refundId !== undefined && event.refund.id.toLowerCase() !== refundId) return undefined;
      return refundOfEvent(event);
    },
    identity: refundIdentity,
    rank: refundRank,
    isFinal: refundId === undefined ? undefined : isFinalRefund,
    onClose: () => release?.(),
    logs: context,
  });
}
