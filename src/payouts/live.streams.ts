import { requireAnyPrincipal } from '../identity/principal';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { NotFoundError } from '../platform/errors/gateway-errors';
import { toPayout } from './payout.mapper';
import { ownerOf, readPayout } from './payout.workflow';
import type { ProviderWithdrawal } from '../platform/provider/provider-types';
import type { Payout } from './payout.type';
import { dataTaskStatusRank, isFinalDataTaskStatus } from '../data-tasks/data-task.store';
import { sameOwner } from './payout-ledger';
import { FINAL_PAYOUT_STATUSES, payoutRank } from './payout-status';
import { validateTransactionId } from '../platform/validation/id.validator';
import { toDataTaskSnapshot, type DataTaskSnapshot } from '../data-tasks/data-task.snapshot';
import { sharedMapping } from '../platform/live/shared-subscribe';
import { requireOwnTask } from '../data-tasks/data-tasks';
import { liveStream } from '../platform/live/live-stream';
import { topics } from '../platform/live/topics';

/*
 * The event streams behind Subscription's fields. Each checks who may watch before anything is acknowledged
 * (an error here is the subscription's GraphQL error), listens, reads the current state, and sends it first.
 * What does not depend on the subscriber (identity, rank, finality) is one function for all of them.
 */

// Every subscriber of an event gets the same mapped object, so sharedSubscribe executes it once for all of them.
const payoutOfEvent = sharedMapping((withdrawal) => toPayout(withdrawal as ProviderWithdrawal));

const dataTaskRank = (snapshot: DataTaskSnapshot): number => dataTaskStatusRank(snapshot.status);
const isFinalDataTask = (snapshot: DataTaskSnapshot): boolean => isFinalDataTaskStatus(snapshot.status);

/** dataTaskUpdated: the session that started the task; ends once the task has SUCCEEDED or FAILED. */
export async function dataTaskStream(context: GatewayContext, id: string): Promise<AsyncIterableIterator<DataTaskSnapshot>> {
  const task = await requireOwnTask(context, id);
  return liveStream<DataTaskSnapshot>({
    bus: context.services.live.bus,
    topic: topics.dataTask(task.id),
    current: async () => [toDataTaskSnapshot(await requireOwnTask(context, task.id))],
    fromEvent: (payload) => {
      const snapshot = payload as DataTaskSnapshot;
      return snapshot?.id === task.id ? snapshot : undefined;
    },
    identity: () => task.id,
    rank: dataTaskRank,
    isFinal: isFinalDataTask,
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
