/*
 * The provider's payloads, field for field as the provider's API specification tables them (snake_case, as on the wire).
 * Timestamps stay strings: they pass through verbatim. Minor-unit amounts are numbers; data-API amounts are
 * DecimalString (see decimal-json.ts).
 */
import type { DecimalString } from './decimal-json';

export type ProviderScope = 'paydirect' | 'payments';

export interface ProviderTokenResponse {
  access_token: string;
  expires_in: number;
  token_type: string;
  /** Authorization-code and refresh grants only. */
  refresh_token?: string;
  scope?: string;
}

export interface ProviderAccountHolder {
  name: string;
  verified: boolean;
  match_score: number;
}

export interface ProviderAccountReport {
  verifiable: boolean;
  currency: string;
  provider_id: string;
  account_type: string;
  account_holders: ProviderAccountHolder[];
  display_name: string;
  iban: string;
  swift_bic: string;
  account_number: string;
  sort_code: string;
}

export interface ProviderVerificationResult {
  verified: boolean;
  account_holder_name: string;
  match_score: number;
  report: ProviderAccountReport[];
}

export type ProviderWithdrawalStatus = 'authorised' | 'submitted' | 'settled' | 'rejected' | 'failed' | (string & {});

export interface ProviderWithdrawalRequest {
  transaction_id: string;
  beneficiary_name: string;
  beneficiary_iban: string;
  beneficiary_reference: string;
  currency: string;
  amount_in_minor: number;
  context_code: 'withdrawal';
}

export interface ProviderWithdrawal {
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
  status: ProviderWithdrawalStatus;
  context_code: string;
}

export type ProviderRefundStatus = 'pending' | 'authorized' | 'executed' | 'failed' | (string & {});

export interface ProviderRefundRequest {
  /** Omitted: the full payment amount. */
  amount_in_minor?: number;
  reference: string;
}

export interface ProviderRefund {
  id: string;
  amount_in_minor: number;
  currency: string;
  status: ProviderRefundStatus;
  reference: string;
  created_at: string;
  /** Absent (or null) until the refund reaches that stage. */
  authorized_at?: string | null;
  executed_at?: string | null;
  failure_reason?: string | null;
}

export interface ProviderTaskAck {
  results_uri: string;
  status: string;
  task_id: string;
}

export interface ProviderAccount {
  update_timestamp: string;
  account_id: string;
  account_type: string;
  display_name: string;
  currency: string;
  account_number: { iban: string; number: string; sort_code: string; swift_bic: string };
  provider: { provider_id: string };
}

export interface ProviderTransaction {
  transaction_id: string;
  normalised_provider_transaction_id: string;
  provider_transaction_id: string;
  timestamp: string;
  description: string;
  amount: DecimalString;
  currency: string;
  transaction_type: string;
  transaction_category: string;
  transaction_classification: string[];
  merchant_name: string;
  running_balance?: { amount: DecimalString; currency: string };
  /** Account transactions: bank_transaction_id, provider_transaction_category; cards: cardNumber, location, …. */
  meta: Record<string, unknown>;
}

export interface ProviderAccountBalance {
  currency: string;
  available: DecimalString;
  current: DecimalString;
  overdraft: DecimalString;
  update_timestamp: string;
}

export interface ProviderCard {
  account_id: string;
  card_network: string;
  card_type: string;
  currency: string;
  display_name: string;
  partial_card_number: string;
  name_on_card: string;
  valid_from: string;
  valid_to: string;
  update_timestamp: string;
  provider: { provider_id: string };
}

/** GET /data/v1/info: who the login is (TrueLayer's shape; only the name is read). */
export interface ProviderUserInfo {
  full_name?: string;
  update_timestamp?: string;
}

export interface ProviderCardBalance {
  available: DecimalString;
  currency: string;
  current: DecimalString;
  credit_limit: DecimalString;
  last_statement_balance: DecimalString;
  last_statement_date: string;
  payment_due: DecimalString;
  payment_due_date: string;
  update_timestamp: string;
}

export interface ProviderDataWebhook {
  request_timestamp: string;
  request_uri: string;
  results_uri: string;
  credentials_id: string;
  task_id: string;
  status: string;
}
