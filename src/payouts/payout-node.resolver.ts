import type { OperationContext } from '../platform/graphql/operation-context';
import type { NodeType } from '../platform/graphql/node/node.registry';
import { isUuid } from '../platform/validation/text-rules';
import { toPayout } from './payout.mapper';
import { withdrawalReadsOf, type PayoutService } from './payout.service';
import { PAYOUT_TAG } from './payout.type';

/**
 * node(id:) for payouts, read exactly as payout(transactionId:) reads them: a session its own (another's is null,
 * as an unknown one is), a merchant key any. Each payout's provider read is shared with the rest of the operation.
 */
export function payoutNodeType(payouts: PayoutService): NodeType {
  return {
    tag: PAYOUT_TAG,
    arity: 1,
    load(keys: readonly (readonly string[])[], context: OperationContext) {
      const { principal } = context;
      const caller = principal.kind === 'user' || principal.kind === 'merchant' ? principal : undefined;
      return Promise.all(
        keys.map(async ([transactionId]) => {
          if (!caller || transactionId === undefined || !isUuid(transactionId)) return null;
          const withdrawal = await payouts.read(caller, transactionId.toLowerCase(), context.callOptions(), withdrawalReadsOf(context));
          return withdrawal ? toPayout(withdrawal) : null;
        }),
      );
    },
  };
}
