import { requireMerchant } from '../platform/access/principal';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { NotFoundError } from '../platform/errors/gateway-errors';
import { toRefund } from '../refunds/refund.mapper';
import { getRefund, refundsOfPayment } from '../refunds/refund.workflow';
import { RefundStatus } from '../refunds/refund-status.enum';
import type { Refund } from '../refunds/refund.type';
import { validatePaymentId } from '../platform/validation/id.validator';
import { InputProblems } from '../platform/validation/input-problems';
import { isUuid, shown } from '../platform/validation/text-rules';
import { sharedMapping } from '../platform/live/shared-subscribe';
import { liveStream } from '../platform/live/live-stream';
import { topics } from '../platform/live/topics';
import type { RefundEvent } from '../refunds';

/*
 * The event streams behind Subscription's fields. Each checks who may watch before anything is acknowledged
 * (an error here is the subscription's GraphQL error), listens, reads the current state, and sends it first.
 * What does not depend on the subscriber (identity, rank, finality of a refund) is one function for all of them.
 */

// Every subscriber of an event gets the same mapped object, so sharedSubscribe executes it once for all of them.
const refundOfEvent = sharedMapping((event) => toRefund((event as RefundEvent).refund, (event as RefundEvent).paymentId));

const REFUND_RANK: Readonly<Record<RefundStatus, number>> = {
  [RefundStatus.PENDING]: 0,
  [RefundStatus.AUTHORIZED]: 1,
  [RefundStatus.EXECUTED]: 2,
  [RefundStatus.FAILED]: 2,
};

const refundIdentity = (refund: Refund): string => refund.id.toLowerCase();
const refundRank = (refund: Refund): number => REFUND_RANK[refund.status];
const isFinalRefund = (refund: Refund): boolean => REFUND_RANK[refund.status] === 2;

/**
 * refundUpdated: merchant keys only. The current state is every refund of the payment (oldest first), or the one
 * refund asked for; then each change: a refund made through any instance, its authorization as the refund watcher
 * reads it, its end as the provider's refund webhooks report it. With a refundId the stream ends once that refund
 * is EXECUTED or FAILED; for a whole payment it stays open (new refunds may come), and so does its watch.
 */
export async function refundStream(context: GatewayContext, args: { paymentId: string; refundId?: string | null }): Promise<AsyncIterableIterator<Refund>> {
  requireMerchant(context.principal);
  const paymentId = validatePaymentId(args.paymentId, 'paymentId');
  let refundId: string | undefined;
  if (args.refundId !== undefined && args.refundId !== null) {
    if (!isUuid(args.refundId)) {
      const problems = new InputProblems();
      problems.add('refundId', `must be a refund id, a UUID; got ${shown(args.refundId)}`);
      problems.throwIfAny();
    }
    refundId = args.refundId.toLowerCase();
  }
  const { live } = context.services;
  let release: (() => void) | undefined;
  return liveStream<Refund>({
    bus: live.bus,
    topic: topics.refund(paymentId),
    current: async () => {
      if (refundId !== undefined) {
        const refund = await getRefund(context, paymentId, refundId);
        if (!isFinalRefund(refund)) release = live.refundWatchers.watch(paymentId);
        return [refund];
      }
      const refunds = await live.refundReads.read(paymentId, () => refundsOfPayment(context, paymentId));
      if (refunds === null) throw new NotFoundError('No payment with that id exists at the provider.');
      release = live.refundWatchers.watch(paymentId);
      return refunds;
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
