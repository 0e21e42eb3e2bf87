import { Ctx, FieldResolver, Resolver } from 'type-graphql';
import { requireUser } from '../platform/access/principal';
import type { OperationContext } from '../platform/graphql/operation-context';
import { Viewer } from '../accounts';
import { toVerifiedBeneficiary } from './verification.mapper';
import { VerifiedBeneficiary } from './verified-beneficiary.type';
import type { BeneficiaryService } from './beneficiary.service';

/** Viewer.verifiedBeneficiaries: from the gateway's own store, not the data API. */
@Resolver(() => Viewer)
export class VerifiedBeneficiaryResolver {
  constructor(private readonly beneficiaries: BeneficiaryService) {}

  @FieldResolver(() => [VerifiedBeneficiary], {
    description: 'IBANs this user has verified; payouts may go to these without a new verification.',
  })
  async verifiedBeneficiaries(@Ctx() context: OperationContext): Promise<VerifiedBeneficiary[]> {
    const user = requireUser(context.principal);
    return (await this.beneficiaries.listForUser(user.userId)).map((record) => toVerifiedBeneficiary(record, user.userId));
  }
}
