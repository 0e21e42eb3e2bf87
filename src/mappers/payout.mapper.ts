import type { ProviderWithdrawal } from '../datasources/provider-types';
import { Payout } from '../schema/payout.type';
import type { PayoutRecord } from '../store/payout.store';

export function toPayout(source: ProviderWithdrawal): Payout {
  return Object.assign(new Payout(), {
    transactionId: source.transaction_id,
    status: source.status,
    beneficiaryName: source.beneficiary_name,
    beneficiaryIban: source.beneficiary_iban,
    beneficiaryReference: source.beneficiary_reference,
    amountInMinor: source.amount_in_minor,
    currency: source.currency,
    contextCode: source.context_code,
    authorisedAt: source.authorised_at ?? null,
    submittedAt: source.submitted_at ?? null,
    settledAt: source.settled_at ?? null,
    rejectedAt: source.rejected_at ?? null,
    failedAt: source.failed_at ?? null,
  });
}

/**
 * A stored payout: the provider's withdrawal as last seen, or, while the provider has not confirmed it yet, the
 * request as recorded, with status `pending-submission` and no stage reached.
 */
export function toPayoutFromRecord(record: PayoutRecord): Payout {
  if (record.withdrawal) return toPayout(record.withdrawal);
  const { request } = record;
  return Object.assign(new Payout(), {
    transactionId: request.transaction_id,
    status: record.status,
    beneficiaryName: request.beneficiary_name,
    beneficiaryIban: request.beneficiary_iban,
    beneficiaryReference: request.beneficiary_reference,
    amountInMinor: request.amount_in_minor,
    currency: request.currency,
    contextCode: request.context_code,
    authorisedAt: null,
    submittedAt: null,
    settledAt: null,
    rejectedAt: null,
    failedAt: null,
  });
}
