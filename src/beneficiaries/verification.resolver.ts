import { Args, Ctx, Mutation, Resolver } from 'type-graphql';
import { requireUser } from '../platform/access/principal';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { NotFoundError } from '../platform/errors/gateway-errors';
import { mergeVerifications, toVerificationResult, verifiedBeneficiariesFrom } from './verification.mapper';
import { VerificationResult } from './verification-result.type';
import { VerifyAccountHolderArgs } from './verify-account-holder.args';
import { validateHolderName } from './holder-name';

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
    const { verification, beneficiaries } = context.services;
    const active = (await context.connections()).filter((connection) => connection.status === 'active');
    if (active.length === 0) throw new NotFoundError('This user has no active bank connection to verify against; connect a bank first.');
    // Every bank of the user is asked at once: the name may hold an account at any of them.
    const results = await Promise.all(active.map((connection) => verification.verify(context.bankBearer(connection.id), checked, context.callOptions())));
    const result = mergeVerifications(results);
    // Stored before answering, so a client that goes straight on to createPayout finds the beneficiary.
    await beneficiaries.recordVerified(user.userId, verifiedBeneficiariesFrom(result, new Date().toISOString()));
    return toVerificationResult(result);
  }
}
