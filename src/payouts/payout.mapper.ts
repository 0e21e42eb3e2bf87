import type { ProviderWithdrawal } from '../platform/provider/provider-types';
import { toPayoutStatus } from './payout-status.enum';
import { Payout } from './payout.type';

/** A withdrawal as the provider shows it, or a recorded payout's withdrawalView, as the schema's Payout. */
export function toPayout(source: ProviderWithdrawal): Payout {
  return Object.assign(new Payout(), {
    transactionId: source.transaction_id,
    status: source.status,
    state: toPayoutStatus(source.status),
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
