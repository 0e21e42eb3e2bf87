import { createHash } from 'node:crypto';
import type { ProviderVerificationResult } from '../platform/provider/provider-types';
import { AccountHolder } from './account-holder.type';
import { AccountReport } from './account-report.type';
import { VerificationResult } from './verification-result.type';
import { VerifiedBeneficiary } from './verified-beneficiary.type';
import type { VerifiedBeneficiaryRecord } from './beneficiary.store';

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

export function toVerifiedBeneficiary(record: VerifiedBeneficiaryRecord, userId: string): VerifiedBeneficiary {
  return Object.assign(new VerifiedBeneficiary(), {
    key: verifiedBeneficiaryKey(userId, record.iban),
    iban: record.iban,
    name: record.name,
    verifiedAt: record.verifiedAt,
  });
}

/**
 * A user's verification of an IBAN is one row per (user, IBAN). Its global id carries a digest of both rather than
 * the IBAN itself, so an id that travels (URLs, logs, caches) does not spell an account number; unique per user.
 */
export function verifiedBeneficiaryKey(userId: string, iban: string): string {
  return createHash('sha256').update(`${userId}\n${iban}`).digest('base64url').slice(0, 22);
}
