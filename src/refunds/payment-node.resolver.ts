import { scopedKey, type OperationContext } from '../platform/graphql/operation-context';
import type { NodeType } from '../platform/graphql/node/node.registry';
import { isUuid } from '../platform/validation/text-rules';
import { toPayment, toRefund } from './refund.mapper';
import type { PaymentRecord } from './refund.model';
import type { RefundService } from './refund.service';
import { PAYMENT_TAG } from './payment.type';
import { REFUND_TAG } from './refund.type';

type Keys = readonly (readonly string[])[];

/** One operation's payment reads: a payment and its refunds asked for together cost one refund list. */
const PAYMENT_READS = scopedKey<Map<string, Promise<PaymentRecord | null>>>('payment node reads');

/**
 * node(id:) for payments and refunds: merchant keys only, as payment(id:) (anyone else gets null, with no call).
 * Each payment costs what payment(id:) costs, one refund list, however many of its refunds are asked for.
 */
export function paymentNodeTypes(refunds: RefundService): NodeType[] {
  const paymentOf = (context: OperationContext, paymentId: string | undefined): Promise<PaymentRecord | null> => {
    if (context.principal.kind !== 'merchant' || paymentId === undefined || !isUuid(paymentId)) return Promise.resolve(null);
    const reads = context.scoped(PAYMENT_READS, () => new Map<string, Promise<PaymentRecord | null>>());
    const id = paymentId.toLowerCase();
    let read = reads.get(id);
    if (!read) reads.set(id, (read = refunds.payment(id, context.callOptions())));
    return read;
  };
  return [
    {
      tag: PAYMENT_TAG,
      arity: 1,
      load: (keys: Keys, context: OperationContext) =>
        Promise.all(
          keys.map(async ([paymentId]) => {
            const payment = await paymentOf(context, paymentId);
            return payment ? toPayment(payment) : null;
          }),
        ),
    },
    {
      tag: REFUND_TAG,
      arity: 2,
      load: (keys: Keys, context: OperationContext) =>
        Promise.all(
          keys.map(async ([paymentId, refundId]) => {
            const payment = await paymentOf(context, paymentId);
            const refund = payment?.refunds.find((item) => item.id.toLowerCase() === refundId?.toLowerCase());
            return refund ? toRefund(refund) : null;
          }),
        ),
    },
  ];
}
