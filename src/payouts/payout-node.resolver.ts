import type { OperationContext } from '../platform/graphql/operation-context';
import type { NodeType } from '../platform/graphql/node/node.registry';
import { isUuid } from '../platform/validation/text-rules';
import { toPayout } from './payout.mapper';
import { payoutReadsOf, type PayoutService } from './payout.service';
import { PAYOUT_TAG } from './payout.type';

/**
 * node(id:) for payouts, read as payout(transactionId:) reads a recorded payout: a session its own (another's is
 * null, as an unknown one is), a merchant key any. One ledger query finds a batch's payouts; an id the ledger does not
 * know is null with no provider call. Each payout's provider read is shared with the rest of the operation.
 */
export function payoutNodeType(payouts: PayoutService): NodeType {
  return {
    tag: PAYOUT_TAG,
    arity: 1,
    async load(keys: readonly (readonly string[])[], context: OperationContext) {
      const { principal } = context;
      const caller = principal.kind === 'user' || principal.kind === 'merchant' ? principal : undefined;
      const ids = keys.map(([transactionId]) => (transactionId !== undefined && isUuid(transactionId) ? transactionId.toLowerCase() : undefined));
      const wanted = ids.filter((id): id is string => id !== undefined);
      if (!caller || wanted.length === 0) return keys.map(() => null);
      const found = await payouts.readRecorded(caller, wanted, context.callOptions(), payoutReadsOf(context));
      const byId = new Map(wanted.map((id, index) => [id, found[index]]));
      return ids.map((id) => {
        const payout = id === undefined ? undefined : byId.get(id);
        return payout instanceof Error ? payout : payout ? toPayout(payout) : null;
      });
    },
  };
}
