import { requireAnyPrincipal, requireMerchant } from '../platform/access/principal';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { NotFoundError } from '../platform/errors/gateway-errors';
import { toPayout } from './payout.mapper';
import { toRefund } from '../refunds/refund.mapper';
import { ownerOf, readPayout } from './payout.workflow';
import { getRefund, refundsOfPayment } from '../refunds/refund.workflow';
import type { ProviderWithdrawal } from '../platform/provider/provider-types';
import type { Payout } from './payout.type';
import { RefundStatus } from '../refunds/refund-status.enum';
import type { Refund } from '../refunds/refund.type';
import { sameOwner } from './payout-ledger';
import { FINAL_PAYOUT_STATUSES, payoutRank } from './payout-status';
import { validatePaymentId, validateTransactionId } from '../platform/validation/id.validator';
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
const payoutOfEvent = sharedMapping((withdrawal) => toPayout(withdrawal as ProviderWithdrawal));

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

const payoutRankOf = (payout: Payout): number => payoutRank(payout.status);
const isFinalPayout = (payout: Payout): boolean => FINAL_PAYOUT_STATUSES.has(payout.status);

/**
 * payoutUpdated: a session for the payouts it created (any other id is NOT_FOUND, exactly like an unknown one),
 * a merchant key for any. While the stream is open and the payout not final, the payout watcher reads it.
 */
export async function payoutStream(context: GatewayContext, transactionIdArg: string): Promise<AsyncIterableIterator<Payout>> {
  const caller = requireAnyPrincipal(context.principal);
  const transactionId = validateTransactionId(transactionIdArg);
  const { live, payoutLedger } = context.services;
  const notFound = (): NotFoundError =>
    new NotFoundError(caller.kind === 'user' ? 'No payout with that transactionId was created by this user.' : 'No payout with that transactionId exists.');
  if (caller.kind === 'user') {
    const record = await payoutLedger.get(transactionId);
    if (!record || !sameOwner(record.owner, ownerOf(caller))) throw notFound();
  }
  let release: (() => void) | undefined;
  return liveStream<Payout>({
    bus: live.bus,
    topic: topics.payout(transactionId),
    current: async () => {
      const payout = await readPayout(context, caller, transactionId);
      if (!payout) throw notFound();
      if (!FINAL_PAYOUT_STATUSES.has(payout.status)) release = live.payoutWatchers.watch(transactionId);
      return [payout];
    },
    fromEvent: (payload) => {
      const withdrawal = payload as ProviderWithdrawal;
      return withdrawal?.transaction_id?.toLowerCase() === transactionId ? payoutOfEvent(withdrawal) : undefined;
    },
    identity: () => transactionId,
    rank: payoutRankOf,
    isFinal: isFinalPayout,
    onClose: () => release?.(),
    logs: context,
  });
}
