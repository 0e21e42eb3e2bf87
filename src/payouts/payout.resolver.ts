import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { requireAnyPrincipal, requireMerchant } from '../platform/access/principal';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { approvePayout, createPayout, declinePayout, readPayout } from './payout.workflow';
import { CreatePayoutArgs } from './create-payout.args';
import { DeclinePayoutArgs } from './decline-payout.args';
import { PayoutArgs } from './payout.args';
import { Payout } from './payout.type';
import { validateDeclineReason } from './decline-reason.validator';
import { validateTransactionId } from '../platform/validation/id.validator';
import { validatePayoutInput } from './payout-input.validator';

@Resolver(() => Payout)
export class PayoutResolver {
  @Mutation(() => Payout, {
    description:
      "Pays out from the merchant account to a beneficiary IBAN that was verified before (BENEFICIARY_NOT_VERIFIED otherwise). transactionId doubles as the idempotency key: the same id twice creates one payout; without one, an identical request within 15 minutes answers the first payout. Limits refuse with PAYOUT_LIMIT_EXCEEDED (extensions.limit names which); a session's payout that takes its user's 24-hour total above the approval threshold is recorded as awaiting-approval.",
  })
  createPayout(@Args() { input }: CreatePayoutArgs, @Ctx() context: GatewayContext): Promise<Payout> {
    const caller = requireAnyPrincipal(context.principal);
    const explicitId = input.transactionId !== undefined && input.transactionId !== null;
    return createPayout(context, caller, validatePayoutInput(input), explicitId);
  }

  @Mutation(() => Payout, {
    description:
      'Sends a payout that is awaiting approval to the provider, once checked again: its user not revoked, its beneficiary still verified, every limit still holding. One waiting past the approval expiry is expired instead. Needs a merchant key.',
  })
  approvePayout(@Args() { transactionId }: PayoutArgs, @Ctx() context: GatewayContext): Promise<Payout> {
    requireMerchant(context.principal);
    return approvePayout(context, validateTransactionId(transactionId));
  }

  @Mutation(() => Payout, { description: 'Ends a payout that is awaiting approval with status declined; it is never sent. Needs a merchant key.' })
  declinePayout(@Args() { transactionId, reason }: DeclinePayoutArgs, @Ctx() context: GatewayContext): Promise<Payout> {
    requireMerchant(context.principal);
    return declinePayout(context, validateTransactionId(transactionId), validateDeclineReason(reason));
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
