import { BeneficiaryLedger, BeneficiaryService } from '../beneficiaries';
import type { Database } from '../platform/db/database';
import type { VerificationClient } from '../platform/provider/verification.client';

/** The beneficiaries module's ledger and service, and the verification client it calls. */
export function createBeneficiaryServices(deps: { database: Database; verification: VerificationClient }): {
  verification: VerificationClient;
  beneficiaries: BeneficiaryLedger;
  beneficiaryService: BeneficiaryService;
} {
  const beneficiaries = new BeneficiaryLedger(deps.database);
  return {
    verification: deps.verification,
    beneficiaries,
    beneficiaryService: new BeneficiaryService({ verification: deps.verification, ledger: beneficiaries, clock: Date.now }),
  };
}
