import { Args, Ctx, Mutation, Resolver } from 'type-graphql';
import { requireUser } from '../auth/principal';
import type { GatewayContext } from '../context';
import { toVerificationResult, verifiedBeneficiariesFrom } from '../mappers/verification.mapper';
import { VerificationResult } from '../schema/verification-result.type';
import { VerifyAccountHolderArgs } from '../schema/verify-account-holder.args';
import { validateHolderName } from '../validation/holder-name';

@Resolver()
export class VerificationResolver {
  @Mutation(() => VerificationResult, {
    description:
      "Checks a name against the holders of the session user's bank accounts. Every account whose holder matched is remembered as a verified beneficiary of that user.",
  })
  async verifyAccountHolder(@Args() { name }: VerifyAccountHolderArgs, @Ctx() context: GatewayContext): Promise<VerificationResult> {
    // Who first: a caller without a session learns nothing about what the input would have needed.
    const user = requireUser(context.principal);
    const checked = validateHolderName(name);
    const { verification, userTokens, beneficiaries } = context.services;
    const result = await verification.verify(userTokens.bearerFor(user.sessionToken, user.session.tokens), checked, {
      requestId: context.requestId,
    });
    // Stored before answering, so a client that goes straight on to createPayout finds the beneficiary.
    await beneficiaries.recordVerified(user.userId, verifiedBeneficiariesFrom(result, new Date().toISOString()));
    return toVerificationResult(result);
  }
}
