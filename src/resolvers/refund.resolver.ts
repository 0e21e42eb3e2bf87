import { Args, Ctx, Mutation, Resolver } from 'type-graphql';
import { requireMerchant } from '../auth/principal';
import type { GatewayContext } from '../context';
import { RefundPaymentArgs } from '../schema/refund-payment.args';
import { Refund } from '../schema/refund.type';
import { validateRefundInput } from '../validation/refund-input.validator';
import { refundPayment } from '../refunds/refund.workflow';

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
