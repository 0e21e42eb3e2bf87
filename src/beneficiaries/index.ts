/** The beneficiaries module (account-holder verification, verified beneficiaries): what the rest of the gateway may use of it. */
import type { Database } from '../platform/db/database';
import type { VerificationClient } from '../platform/provider/verification.client';
import { BeneficiaryService } from './beneficiary.service';
import { BeneficiaryLedger } from './beneficiary.store';

export { BeneficiaryService };
export { type BankAccess, type BeneficiaryServiceDeps, type VerifyingUser } from './beneficiary.service';
export { BeneficiaryLedger };
export { type IbanHolderRecord, type VerifiedBeneficiaryRecord } from './beneficiary.store';
export { holderNameProblem, sameHolderName } from './beneficiary-name';
export { ibanProblem, normaliseIban } from './iban';
export { VerificationResolver } from './verification.resolver';
export { VerifiedBeneficiaryResolver } from './verified-beneficiary.resolver';
export { AccountHolder } from './account-holder.type';
export { AccountReport } from './account-report.type';
export { VerificationResult } from './verification-result.type';
export { VerifiedBeneficiary } from './verified-beneficiary.type';
export { verifiedBeneficiaryNodeType } from './verified-beneficiary-node.resolver';

export interface BeneficiariesDeps {
  database: Database;
  verification: VerificationClient;
  /** Epoch ms: when a beneficiary was verified. */
  clock: () => number;
}

export interface Beneficiaries {
  /** Verified beneficiaries per user, and who verified each IBAN. */
  ledger: BeneficiaryLedger;
  /** Account-holder verification and the verified beneficiaries. */
  service: BeneficiaryService;
}

export function createBeneficiaries(deps: BeneficiariesDeps): Beneficiaries {
  const ledger = new BeneficiaryLedger(deps.database);
  return { ledger, service: new BeneficiaryService({ verification: deps.verification, ledger, clock: deps.clock }) };
}
