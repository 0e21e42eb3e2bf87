/** A withdrawal (direct payout) as the provider returns it inside `{ result }`, field for field as the spec lists. */
export type WithdrawalStatus = 'authorised' | 'submitted' | 'settled' | 'rejected' | 'failed';

export interface Withdrawal {
  transaction_id: string;
  authorised_at: string | null;
  submitted_at: string | null;
  settled_at: string | null;
  rejected_at: string | null;
  failed_at: string | null;
  beneficiary_name: string;
  beneficiary_iban: string;
  beneficiary_reference: string;
  amount_in_minor: number;
  currency: string;
  status: WithdrawalStatus;
  context_code: 'withdrawal';
}

/** The client's request, validated; `transaction_id` lower-cased so that one UUID is one withdrawal whatever its case. */
export interface WithdrawalRequest {
  transaction_id: string;
  beneficiary_name: string;
  beneficiary_iban: string;
  beneficiary_reference: string;
  currency: 'GBP' | 'EUR';
  amount_in_minor: number;
  context_code: 'withdrawal';
}

/** Same transaction_id and the same body: a replay. Anything else differing makes it a reuse of the id. */
export function sameRequest(withdrawal: Withdrawal | WithdrawalRequest, request: WithdrawalRequest): boolean {
  return (
    withdrawal.transaction_id === request.transaction_id &&
    withdrawal.beneficiary_name === request.beneficiary_name &&
    withdrawal.beneficiary_iban === request.beneficiary_iban &&
    withdrawal.beneficiary_reference === request.beneficiary_reference &&
    withdrawal.currency === request.currency &&
    withdrawal.amount_in_minor === request.amount_in_minor &&
    withdrawal.context_code === request.context_code
  );
}
