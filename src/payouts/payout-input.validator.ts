import { randomUUID } from 'node:crypto';
import { holderNameProblem, ibanProblem, normaliseIban } from '../beneficiaries';
import { InputProblems } from '../platform/validation/input-problems';
import { characterCount, hasControlCharacters, isPositiveSafeInteger, isUuid, shown } from '../platform/validation/text-rules';
import type { PayoutRequest } from './payout.model';

/**
 * The provider's limit on beneficiary_reference (docs/provider-choices.md, Withdrawals: what the beneficiary's bank can show on a
 * statement, like a UK Faster Payments reference).
 */
export const MAX_PAYOUT_REFERENCE_CHARACTERS = 18;

/** The currencies the provider pays out in; any other ISO 4217 code is refused before it reaches the provider. */
export const PAYOUT_CURRENCIES: readonly string[] = ['GBP', 'EUR'];

/** createPayout's input as the client sent it. */
export interface PayoutInput {
  transactionId?: string | null;
  beneficiaryName: string;
  beneficiaryIban: string;
  beneficiaryReference: string;
  amountInMinor: number;
  currency: string;
}

/**
 * createPayout's input as the exact payout request to send: every field checked, the IBAN in electronic format,
 * the name trimmed, the transaction id lower-cased (one UUID is one payout whatever its case) or generated.
 * Throws BAD_USER_INPUT naming `input.<field>`.
 */
export function validatePayoutInput(input: PayoutInput, newId: () => string = randomUUID): PayoutRequest {
  const problems = new InputProblems();
  const { transactionId, beneficiaryName, beneficiaryIban, beneficiaryReference, amountInMinor, currency } = input;

  if (transactionId !== undefined && transactionId !== null && !isUuid(transactionId)) {
    problems.add(
      'input.transactionId',
      `must be a UUID such as 3f1c2b4e-8d5a-4c6f-9e7b-1a2d3c4e5f60, or omitted to have one generated; got ${shown(transactionId)}`,
    );
  }
  const nameProblem = holderNameProblem(beneficiaryName);
  if (nameProblem) problems.add('input.beneficiaryName', nameProblem);
  const iban = normaliseIban(beneficiaryIban);
  const ibanIssue = ibanProblem(iban);
  if (ibanIssue) problems.add('input.beneficiaryIban', ibanIssue);
  const referenceProblem = payoutReferenceProblem(beneficiaryReference);
  if (referenceProblem) problems.add('input.beneficiaryReference', referenceProblem);
  if (!isPositiveSafeInteger(amountInMinor)) {
    problems.add('input.amountInMinor', `must be a positive whole number of minor units (pence, cents); got ${shown(amountInMinor)}`);
  }
  const currencyIssue = currencyProblem(currency);
  if (currencyIssue) problems.add('input.currency', currencyIssue);
  problems.throwIfAny();

  return {
    transactionId: (transactionId ?? newId()).toLowerCase(),
    beneficiaryName: beneficiaryName.trim(),
    beneficiaryIban: iban,
    // Sent as given: it is printed on the beneficiary's statement.
    beneficiaryReference,
    currency,
    amountInMinor,
    contextCode: 'withdrawal',
  };
}

function payoutReferenceProblem(reference: string): string | undefined {
  if (reference.trim() === '') {
    return `must be a reference for the beneficiary's statement, 1 to ${MAX_PAYOUT_REFERENCE_CHARACTERS} characters and not only spaces; got ${shown(reference)}`;
  }
  if (characterCount(reference) > MAX_PAYOUT_REFERENCE_CHARACTERS) {
    return `must be at most ${MAX_PAYOUT_REFERENCE_CHARACTERS} characters (it is shown on the beneficiary's statement); got ${characterCount(reference)}`;
  }
  if (hasControlCharacters(reference)) return 'must not contain control characters (tabs, line breaks)';
  return undefined;
}

function currencyProblem(currency: string): string | undefined {
  if (!/^[A-Z]{3}$/.test(currency)) {
    return `must be an ISO 4217 currency code in upper case; payouts accept ${PAYOUT_CURRENCIES.join(' or ')}; got ${shown(currency)}`;
  }
  if (!PAYOUT_CURRENCIES.includes(currency)) {
    return `${currency} is not a payout currency: the provider pays out only in ${PAYOUT_CURRENCIES.join(' or ')}`;
  }
  return undefined;
}
