import { isValidIban } from '../fixtures/bank-details';
import type { SandboxRequest } from '../http/request';
import { characterCount, describe, FieldErrors, isPositiveSafeInteger, isUuid, jsonObjectBody } from '../payments/field-checks';
import type { WithdrawalRequest } from './withdrawal.types';

/** Like a UK Faster Payments reference: what the beneficiary's bank can show on their statement (docs/provider-choices.md). */
export const MAX_BENEFICIARY_REFERENCE = 18;
export const WITHDRAWAL_CURRENCIES = ['GBP', 'EUR'] as const;

const SHAPE = '{ transaction_id, beneficiary_name, beneficiary_iban, beneficiary_reference, currency, amount_in_minor, context_code }';

/** Every field of the spec's request shape is required and checked; unknown extra fields are ignored. */
export function validateWithdrawalRequest(req: SandboxRequest): WithdrawalRequest {
  const body = jsonObjectBody(req, SHAPE);
  const errors = new FieldErrors();
  const { transaction_id, beneficiary_name, beneficiary_iban, beneficiary_reference, currency, amount_in_minor, context_code } = body;

  if (!isUuid(transaction_id)) {
    errors.add('transaction_id', `must be a UUID chosen by the client, e.g. 3f1c2b4e-8d5a-4c6f-9e7b-1a2d3c4e5f60; got ${describe(transaction_id)}`);
  }
  if (typeof beneficiary_name !== 'string' || beneficiary_name.trim() === '') {
    errors.add('beneficiary_name', `must be the account holder's name, a non-empty string; got ${describe(beneficiary_name)}`);
  }
  if (typeof beneficiary_iban !== 'string' || !isValidIban(beneficiary_iban)) {
    errors.add(
      'beneficiary_iban',
      `must be an IBAN (country code, 2 check digits, 11 to 30 letters or digits) whose check digits pass ISO 13616 mod-97; got ${describe(beneficiary_iban)}`,
    );
  }
  if (typeof beneficiary_reference !== 'string' || beneficiary_reference.trim() === '') {
    errors.add(
      'beneficiary_reference',
      `must be a non-empty string of at most ${MAX_BENEFICIARY_REFERENCE} characters; got ${describe(beneficiary_reference)}`,
    );
  } else if (characterCount(beneficiary_reference) > MAX_BENEFICIARY_REFERENCE) {
    errors.add('beneficiary_reference', `must be at most ${MAX_BENEFICIARY_REFERENCE} characters; got ${characterCount(beneficiary_reference)}`);
  }
  if (typeof currency !== 'string' || !(WITHDRAWAL_CURRENCIES as readonly string[]).includes(currency)) {
    errors.add('currency', `must be one of ${WITHDRAWAL_CURRENCIES.join(', ')}; got ${describe(currency)}`);
  }
  if (!isPositiveSafeInteger(amount_in_minor)) {
    errors.add('amount_in_minor', `must be a positive integer in the currency's minor unit (pence, cents); got ${describe(amount_in_minor)}`);
  }
  if (context_code !== 'withdrawal') {
    errors.add('context_code', `must be "withdrawal"; got ${describe(context_code)}`);
  }
  errors.throwIfAny();

  return {
    transaction_id: (transaction_id as string).toLowerCase(),
    beneficiary_name: beneficiary_name as string,
    beneficiary_iban: beneficiary_iban as string,
    beneficiary_reference: beneficiary_reference as string,
    currency: currency as WithdrawalRequest['currency'],
    amount_in_minor: amount_in_minor as number,
    context_code: 'withdrawal',
  };
}
