/** The beneficiaries module (account-holder verification, verified beneficiaries): what the rest of the gateway may use of it. */
export { BeneficiaryService, type BankAccess, type BeneficiaryServiceDeps, type VerifyingUser } from './beneficiary.service';
export { BeneficiaryLedger, type IbanHolderRecord, type VerifiedBeneficiaryRecord } from './beneficiary.store';
export { holderNameProblem, sameHolderName } from './beneficiary-name';
export { ibanProblem, normaliseIban } from './iban';
export { VerificationResolver } from './verification.resolver';
export { VerifiedBeneficiaryResolver } from './verified-beneficiary.resolver';
export { AccountHolder } from './account-holder.type';
export { AccountReport } from './account-report.type';
export { VerificationResult } from './verification-result.type';
export { VerifiedBeneficiary } from './verified-beneficiary.type';
export { verifiedBeneficiaryNodeType } from './verified-beneficiary-node.resolver';
