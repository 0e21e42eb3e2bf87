import type { ProviderVerificationResult } from '../platform/provider/provider-types';
import type { VerifiedBeneficiaryRecord } from './beneficiary.store';
import { normaliseIban } from './iban';

/** One answer for several banks: verified when any bank verified, the best match's name and score, every account reported. */
export function mergeVerifications(results: readonly ProviderVerificationResult[]): ProviderVerificationResult {
  const best = [...results].sort((a, b) => Number(b.verified) - Number(a.verified) || b.match_score - a.match_score)[0]!;
  return { ...best, report: results.flatMap((result) => result.report ?? []) };
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
