import { Args, Ctx, Query, Resolver } from 'type-graphql';
import { requireMerchant } from '../platform/access/principal';
import type { OperationContext } from '../platform/graphql/operation-context';
import { toPayment } from './refund.mapper';
import { IdArgs } from '../platform/graphql/types/id.args';
import { Payment, PAYMENT_TAG } from './payment.type';
import { providerIdOf } from '../platform/graphql/node/global-id';
import { validatePaymentId } from '../platform/validation/id.validator';
import type { RefundService } from './refund.service';

@Resolver(() => Payment)
export class PaymentResolver {
  constructor(private readonly refunds: RefundService) {}

  /**
   * One provider call (the refund list) gives every field. The provider has no payment read, so an unknown id is
   * known only from that call's 404, and shows as null without an error (README, "Refunds through the gateway").
   */
  @Query(() => Payment, { nullable: true, description: 'A payment received into the merchant account, with its refunds. Needs a merchant key.' })
  async payment(@Args() { id }: IdArgs, @Ctx() context: OperationContext): Promise<Payment | null> {
    requireMerchant(context.principal);
    const payment = await this.refunds.payment(validatePaymentId(providerIdOf(id, PAYMENT_TAG)), context.callOptions());
    return payment && toPayment(payment);
  }
}
