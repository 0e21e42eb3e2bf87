import { Ctx, FieldResolver, Resolver } from 'type-graphql';
import { requireUser } from '../platform/access/principal';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { toVerifiedBeneficiary } from '../beneficiaries/verification.mapper';
import { Payout } from './payout.type';
import { VerifiedBeneficiary } from '../beneficiaries/verified-beneficiary.type';
import { Viewer } from '../accounts/viewer.type';
import { toPayout } from './payout.mapper';
import { withdrawalReadsOf, type PayoutService } from './payout.service';

/** The viewer's money fields: from the gateway's own stores, not the data API, so they live apart from ViewerResolver. */
@Resolver(() => Viewer)
export class ViewerMoneyResolver {
  constructor(private readonly service: PayoutService) {}

  @FieldResolver(() => [VerifiedBeneficiary], {
    description: 'IBANs this user has verified; payouts may go to these without a new verification.',
  })
  async verifiedBeneficiaries(@Ctx() context: GatewayContext): Promise<VerifiedBeneficiary[]> {
    const user = requireUser(context.principal);
    return (await context.services.beneficiaries.listForUser(user.userId)).map(toVerifiedBeneficiary);
  }

  @FieldResolver(() => [Payout], { description: 'Payouts this user created, newest first.' })
  async payouts(@Ctx() context: GatewayContext): Promise<Payout[]> {
    const user = requireUser(context.principal);
    return (await this.service.listForUser(user.userId, context.callOptions(), withdrawalReadsOf(context))).map(toPayout);
  }
}
