import type { ProviderVerificationResult } from '../platform/provider/provider-types';
import { AccountHolder } from './account-holder.type';
import { AccountReport } from '../accounts/account-report.type';
import { VerificationResult } from './verification-result.type';
import { VerifiedBeneficiary } from './verified-beneficiary.type';
import type { VerifiedBeneficiaryRecord } from './beneficiary-ledger';
import { normaliseIban } from './iban';

/** One answer for several banks: verified when any bank verified, the best match's name and score, every account reported. */
export function mergeVerifications(results: readonly ProviderVerificationResult[]): ProviderVerificationResult {
  const best = [...results].sort((a, b) => Number(b.verified) - Number(a.verified) || b.match_score - a.match_score)[0]!;
  return { ...best, report: results.flatMap((result) => result.report ?? []) };
}

export function toVerificationResult(source: ProviderVerificationResult): VerificationResult {
  return Object.assign(new VerificationResult(), {
    verified: source.verified,
    accountHolderName: source.account_holder_name,
    matchScore: source.match_score,
    report: (source.report ?? []).map((entry) =>
      Object.assign(new AccountReport(), {
        verifiable: entry.verifiable,
        currency: entry.currency ?? null,
        providerId: entry.provider_id ?? null,
        accountType: entry.account_type ?? null,
        accountHolders: (entry.account_holders ?? []).map((holder) =>
          Object.assign(new AccountHolder(), { name: holder.name, verified: holder.verified, matchScore: holder.match_score }),
        ),
        displayName: entry.display_name ?? null,
        iban: entry.iban ?? null,
        swiftBic: entry.swift_bic ?? null,
        accountNumber: entry.account_number ?? null,
        sortCode: entry.sort_code ?? null,
      }),
    ),
  });
}

/**
 * The accounts this verification proved: each reported account with an IBAN and a holder the bank matched. The
 * name kept is that holder's as the bank reported it (on a joint account, the first holder that matched). An IBAN
 * reported twice is kept once.
 */
export function verifiedBeneficiariesFrom(source: ProviderVerificationResult, verifiedAt: string): VerifiedBeneficiaryRecord[] {
  const found = new Map<string, VerifiedBeneficiaryRecord>();
  for (const entry of source.report ?? []) {
    const holder = (entry.account_holders ?? []).find((candidate) => candidate.verified === true);
    if (!holder || typeof entry.iban !== 'string' || entry.iban.trim() === '') continue;
    const iban = normaliseIban(entry.iban);
    if (!found.has(iban)) found.set(iban, { iban, name: holder.name, verifiedAt });
  }
  return [...found.values()];
}

export function toVerifiedBeneficiary(record: VerifiedBeneficiaryRecord): VerifiedBeneficiary {
  return Object.assign(new VerifiedBeneficiary(), { iban: record.iban, name: record.name, verifiedAt: record.verifiedAt });
}
