import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { requireAnyPrincipal } from '../auth/principal';
import type { GatewayContext } from '../context';
import { CreatePayoutArgs } from '../schema/create-payout.args';
import { PayoutArgs } from '../schema/payout.args';
import { Payout } from '../schema/payout.type';
import { validateTransactionId } from '../validation/id.validator';
import { validatePayoutInput } from '../validation/payout-input.validator';
import { createPayout, readPayout } from './payout.workflow';

@Resolver(() => Payout)
export class PayoutResolver {
  @Mutation(() => Payout, {
    description:
      'Pays out from the merchant account to a beneficiary IBAN that was verified before (BENEFICIARY_NOT_VERIFIED otherwise). transactionId doubles as the idempotency key: the same id twice creates one payout.',
  })
  createPayout(@Args() { input }: CreatePayoutArgs, @Ctx() context: GatewayContext): Promise<Payout> {
    const caller = requireAnyPrincipal(context.principal);
    return createPayout(context, caller, validatePayoutInput(input));
  }

  @Query(() => Payout, {
    nullable: true,
    description: 'A payout. A session sees only the payouts it created; a merchant key sees all.',
  })
  payout(@Args() { transactionId }: PayoutArgs, @Ctx() context: GatewayContext): Promise<Payout | null> {
    const caller = requireAnyPrincipal(context.principal);
    return readPayout(context, caller, validateTransactionId(transactionId));
  }
}
