import { Args, Ctx, Mutation, Resolver } from 'type-graphql';
import { requireMerchant } from '../platform/access/principal';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { RefundPaymentArgs } from './refund-payment.args';
import { Refund } from './refund.type';
import { validateRefundInput } from './refund-input.validator';
import { refundPayment } from './refund.workflow';

@Resolver(() => Refund)
export class RefundResolver {
  @Mutation(() => Refund, {
    description: 'Refunds all (amountInMinor omitted) or part of a payment. Needs a merchant key. The same idempotencyKey twice creates one refund.',
  })
  refundPayment(@Args() { input }: RefundPaymentArgs, @Ctx() context: GatewayContext): Promise<Refund> {
    requireMerchant(context.principal);
    return refundPayment(context, validateRefundInput(input));
  }
}
