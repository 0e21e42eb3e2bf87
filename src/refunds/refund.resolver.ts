import { Args, Ctx, Mutation, Resolver, Root, Subscription } from 'type-graphql';
import { requireMerchant, requirePerson } from '../platform/access/principal';
import { noteIdempotentReplay } from '../platform/graphql/answer-extensions';
import type { OperationContext } from '../platform/graphql/operation-context';
import { RefundPaymentArgs } from './refund-payment.args';
import { RefundUpdatedArgs } from './refund-updated.args';
import { Refund } from './refund.type';
import { PAYMENT_TAG } from './payment.type';
import { providerIdOf } from '../platform/graphql/node/global-id';
import { validateRefundInput } from './refund-input.validator';
import { toRefund } from './refund.mapper';
import type { RefundService } from './refund.service';
import { STREAM_GIVEN_AT_START_UP } from '../platform/graphql/build-schema';

@Resolver(() => Refund)
export class RefundResolver {
  constructor(private readonly refunds: RefundService) {}

  @Mutation(() => Refund, {
    description:
      'Refunds all (amountInMinor omitted) or part of a payment. Needs a merchant key. The same idempotencyKey twice creates one refund; the second answer carries extensions.idempotentReplay: true.',
  })
  async refundPayment(@Args() { input }: RefundPaymentArgs, @Ctx() context: OperationContext): Promise<Refund> {
    requireMerchant(context.principal);
    requirePerson(context.agent, 'Refunding a payment');
    const valid = validateRefundInput({ ...input, paymentId: providerIdOf(input.paymentId, PAYMENT_TAG) });
    return toRefund(await this.refunds.refund(valid, context.callOptions(), () => noteIdempotentReplay(context)));
  }

  // type-graphql calls `subscribe` without the resolver instance: the gateway hands the schema refundStream.
  @Subscription(() => Refund, {
    description: 'Every status change of the refunds of a payment (one refund when refundId is given). Needs a merchant key.',
    subscribe: STREAM_GIVEN_AT_START_UP,
  })
  refundUpdated(@Root() refund: Refund, @Args() _args: RefundUpdatedArgs): Refund {
    return refund;
  }
}
