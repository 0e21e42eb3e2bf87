import { Args, Ctx, Mutation, Resolver } from 'type-graphql';
import { requireUser } from '../platform/access/principal';
import type { OperationContext } from '../platform/graphql/operation-context';
import { toVerificationResult } from './verification.mapper';
import { VerificationResult } from './verification-result.type';
import { VerifyAccountHolderArgs } from './verify-account-holder.args';
import { validateHolderName } from './beneficiary-name';
import type { BeneficiaryService } from './beneficiary.service';
import { accountReads, type AccountGraphService } from '../accounts';

@Resolver()
export class VerificationResolver {
  constructor(
    private readonly beneficiaries: BeneficiaryService,
    private readonly accountGraph: AccountGraphService,
  ) {}

  @Mutation(() => VerificationResult, {
    description:
      "Checks a name against the holders of the session user's bank accounts. Every account whose holder matched is remembered as a verified beneficiary of that user.",
  })
  async verifyAccountHolder(@Args() { name }: VerifyAccountHolderArgs, @Ctx() context: OperationContext): Promise<VerificationResult> {
    // Who first: a caller without a session learns nothing about what the input would have needed.
    const user = requireUser(context.principal);
    const checked = validateHolderName(name);
    const reads = accountReads(context, this.accountGraph);
    const banks = (await reads.connections())
      .filter((connection) => connection.status === 'active')
      .map((connection) => ({ connectionId: connection.id, bearer: reads.bearerOf(connection.id) }));
    return toVerificationResult(await this.beneficiaries.verify({ userId: user.userId, banks }, checked, context.callOptions()));
  }
}
