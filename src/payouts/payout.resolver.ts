import { Args, Ctx, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { requireAnyPrincipal, requireMerchant, requirePerson } from '../platform/access/principal';
import { noteIdempotentReplay } from '../platform/graphql/answer-extensions';
import type { OperationContext } from '../platform/graphql/operation-context';
import { validateTransactionId } from '../platform/validation/id.validator';
import { CreatePayoutArgs } from './create-payout.args';
import { DeclinePayoutArgs } from './decline-payout.args';
import { PayoutArgs } from './payout.args';
import { Payout, PAYOUT_TAG } from './payout.type';
import { providerIdOf } from '../platform/graphql/node/global-id';
import { toPayout } from './payout.mapper';
import { validateDeclineReason } from './decline-reason.validator';
import { validatePayoutInput } from './payout-input.validator';
import { payoutReadsOf, type PayoutService } from './payout.service';
import { STREAM_GIVEN_AT_START_UP } from '../platform/graphql/build-schema';

@Resolver(() => Payout)
export class PayoutResolver {
  constructor(private readonly payouts: PayoutService) {}

  @Mutation(() => Payout, {
    description:
      "Pays out from the merchant account to a beneficiary IBAN that was verified before (BENEFICIARY_NOT_VERIFIED otherwise). transactionId doubles as the idempotency key: the same id twice creates one payout; without one, an identical request within 15 minutes answers the first payout. An answer that is such an earlier payout carries extensions.idempotentReplay: true. Limits refuse with PAYOUT_LIMIT_EXCEEDED (extensions.limit names which); a session's payout that takes its user's 24-hour total above the approval threshold is recorded as awaiting-approval.",
  })
  async createPayout(@Args() { input }: CreatePayoutArgs, @Ctx() context: OperationContext): Promise<Payout> {
    const caller = requireAnyPrincipal(context.principal);
    const explicitId = input.transactionId !== undefined && input.transactionId !== null;
    const payout = await this.payouts.create(caller, validatePayoutInput(input), explicitId, context.callOptions(), {
      onRepeat: () => noteIdempotentReplay(context),
      agent: context.agent,
    });
    return toPayout(payout);
  }

  @Mutation(() => Payout, {
    description:
      'Sends a payout that is awaiting approval to the provider, once checked again: its user not revoked, its beneficiary still verified, every limit still holding. One waiting past the approval expiry is expired instead. Needs a merchant key.',
  })
  async approvePayout(@Args() { transactionId }: PayoutArgs, @Ctx() context: OperationContext): Promise<Payout> {
    requireMerchant(context.principal);
    requirePerson(context.agent, 'Approving a payout');
    return toPayout(await this.payouts.approve(validateTransactionId(providerIdOf(transactionId, PAYOUT_TAG)), context.callOptions()));
  }

  @Mutation(() => Payout, { description: 'Ends a payout that is awaiting approval with status declined; it is never sent. Needs a merchant key.' })
  async declinePayout(@Args() { transactionId, reason }: DeclinePayoutArgs, @Ctx() context: OperationContext): Promise<Payout> {
    requireMerchant(context.principal);
    requirePerson(context.agent, 'Declining a payout');
    return toPayout(await this.payouts.decline(validateTransactionId(providerIdOf(transactionId, PAYOUT_TAG)), validateDeclineReason(reason)));
  }

  @Query(() => Payout, {
    nullable: true,
    description: 'A payout. A session sees only the payouts it created; a merchant key sees all.',
  })
  async payout(@Args() { transactionId }: PayoutArgs, @Ctx() context: OperationContext): Promise<Payout | null> {
    const caller = requireAnyPrincipal(context.principal);
    const found = await this.payouts.read(
      caller,
      validateTransactionId(providerIdOf(transactionId, PAYOUT_TAG)),
      context.callOptions(),
      payoutReadsOf(context),
    );
    return found ? toPayout(found) : null;
  }

  @Subscription(() => Payout, {
    description: 'Every status change of a payout.',
    // type-graphql calls `subscribe` without the resolver instance: the gateway hands the schema payoutStream.
    subscribe: STREAM_GIVEN_AT_START_UP,
  })
  payoutUpdated(@Root() payout: Payout, @Args() _args: PayoutArgs): Payout {
    return payout;
  }
}
