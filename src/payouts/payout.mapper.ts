import type { ProviderWithdrawal } from '../platform/provider/provider-types';
import { Payout } from './payout.type';
import type { PayoutRecord } from './payout-ledger';

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
 * A recorded payout as the provider's withdrawal shape: the withdrawal as last seen or, while the provider has not
 * confirmed it (pending, awaiting approval, declined, expired), the request as recorded with the gateway's status
 * and no stage reached. payoutUpdated events carry this shape.
 */
export function withdrawalView(record: PayoutRecord): ProviderWithdrawal {
  if (record.withdrawal) return record.withdrawal;
  const { request } = record;
  return {
    ...request,
    status: record.status,
    authorised_at: null,
    submitted_at: null,
    settled_at: null,
    rejected_at: null,
    failed_at: null,
  };
}

export function toPayoutFromRecord(record: PayoutRecord): Payout {
  return toPayout(withdrawalView(record));
}
