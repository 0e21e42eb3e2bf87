import { BadUserInputError } from '../../src/platform/errors/gateway-errors';
import type { CreatePayoutInput } from '../../src/payouts/create-payout.input';
import type { RefundPaymentInput } from '../../src/refunds/refund-payment.input';
import { sameHolderName, validateHolderName } from '../../src/beneficiaries/beneficiary-name';
import { ibanProblem, normaliseIban } from '../../src/beneficiaries/iban';
import { validatePaymentId, validateTransactionId } from '../../src/platform/validation/id.validator';
import { validatePayoutInput } from '../../src/payouts/payout-input.validator';
import { validateRefundInput } from '../../src/refunds/refund-input.validator';

// Valid IBANs from the ISO 13616 registry's examples.
const GB_IBAN = 'GB29NWBK60161331926819';
const DE_IBAN = 'DE89370400440532013000';

const PAYOUT: CreatePayoutInput = {
  beneficiaryName: 'John Doe',
  beneficiaryIban: GB_IBAN,
  beneficiaryReference: 'Winnings',
  amountInMinor: 1_000,
  currency: 'GBP',
};

const REFUND: RefundPaymentInput = {
  paymentId: '3f1c2b4e-8d5a-4c6f-9e7b-1a2d3c4e5f60',
  reference: 'Order 42',
};

/** The BAD_USER_INPUT thrown by `run`, so each case can check the field and the message. */
function inputError(run: () => unknown): BadUserInputError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(BadUserInputError);
    return error as BadUserInputError;
  }
  throw new Error('expected BAD_USER_INPUT, but the input was accepted');
}

describe('IBANs', () => {
  it('accepts valid IBANs in any spacing and case, normalised to the electronic format', () => {
    expect(normaliseIban('gb29 nwbk 6016 1331 9268 19')).toBe(GB_IBAN);
    expect(ibanProblem(GB_IBAN)).toBeUndefined();
    expect(ibanProblem(DE_IBAN)).toBeUndefined();
  });

  it('refuses a wrong check digit, a wrong length for the country and a wrong shape, saying which', () => {
    expect(ibanProblem('GB28NWBK60161331926819')).toMatch(/check digits/);
    expect(ibanProblem('GB29NWBK6016133192681')).toMatch(/22 characters for a GB IBAN; got 21/);
    expect(ibanProblem('12345')).toMatch(/2-letter country code/);
  });
});

describe('validatePayoutInput', () => {
  it('builds the exact withdrawal request, with a generated lower-case transaction id when none is given', () => {
    const request = validatePayoutInput(
      { ...PAYOUT, beneficiaryIban: 'gb29 nwbk 6016 1331 9268 19', beneficiaryName: '  John Doe ' },
      () => 'A5C1D0E2-0000-4000-8000-000000000001',
    );
    expect(request).toEqual({
      transactionId: 'a5c1d0e2-0000-4000-8000-000000000001',
      beneficiaryName: 'John Doe',
      beneficiaryIban: GB_IBAN,
      beneficiaryReference: 'Winnings',
      currency: 'GBP',
      amountInMinor: 1_000,
      contextCode: 'withdrawal',
    });
  });

  it('keeps a given transaction id (lower-cased)', () => {
    expect(validatePayoutInput({ ...PAYOUT, transactionId: '3F1C2B4E-8D5A-4C6F-9E7B-1A2D3C4E5F60' }).transactionId).toBe(
      '3f1c2b4e-8d5a-4c6f-9e7b-1a2d3c4e5f60',
    );
  });

  it.each([
    ['input.transactionId', { transactionId: 'not-a-uuid' }, /UUID/],
    ['input.beneficiaryName', { beneficiaryName: '   ' }, /non-empty/],
    ['input.beneficiaryName', { beneficiaryName: 'x'.repeat(141) }, /at most 140 characters; got 141/],
    ['input.beneficiaryIban', { beneficiaryIban: 'GB28NWBK60161331926819' }, /check digits/],
    ['input.beneficiaryIban', { beneficiaryIban: 'hello' }, /IBAN/],
    ['input.beneficiaryReference', { beneficiaryReference: '' }, /1 to 18 characters/],
    ['input.beneficiaryReference', { beneficiaryReference: 'r'.repeat(19) }, /at most 18 characters.*got 19/],
    ['input.beneficiaryReference', { beneficiaryReference: 'line\nbreak' }, /control characters/],
    ['input.amountInMinor', { amountInMinor: 0 }, /positive whole number/],
    ['input.amountInMinor', { amountInMinor: -5 }, /positive whole number/],
    ['input.amountInMinor', { amountInMinor: 1.5 }, /positive whole number/],
    ['input.currency', { currency: 'gbp' }, /upper case; payouts accept GBP or EUR/],
    ['input.currency', { currency: 'USD' }, /only in GBP or EUR/],
  ])('refuses a bad %s', (field, change, message) => {
    const error = inputError(() => validatePayoutInput({ ...PAYOUT, ...change }));
    expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
    expect(error.message).toMatch(message);
  });

  it('counts reference characters, not bytes: 18 accented letters or emoji are fine', () => {
    expect(() => validatePayoutInput({ ...PAYOUT, beneficiaryReference: 'é'.repeat(18) })).not.toThrow();
    expect(() => validatePayoutInput({ ...PAYOUT, beneficiaryReference: '💷'.repeat(18) })).not.toThrow();
  });

  it('reports every bad field at once, naming the first in extensions.field', () => {
    const error = inputError(() => validatePayoutInput({ ...PAYOUT, beneficiaryIban: 'x', currency: 'usd' }));
    expect(error.extensions.field).toBe('input.beneficiaryIban');
    expect(error.message).toMatch(/input\.beneficiaryIban .*; input\.currency /);
  });
});

describe('validateRefundInput', () => {
  it('lower-cases ids and omits an absent amount (the whole payment)', () => {
    expect(validateRefundInput({ ...REFUND, paymentId: REFUND.paymentId.toUpperCase(), idempotencyKey: 'A5C1D0E2-0000-4000-8000-000000000001' })).toEqual({
      paymentId: REFUND.paymentId,
      request: { reference: 'Order 42' },
      idempotencyKey: 'a5c1d0e2-0000-4000-8000-000000000001',
    });
    expect(validateRefundInput({ ...REFUND, amountInMinor: 250 }).request).toEqual({ amount_in_minor: 250, reference: 'Order 42' });
  });

  it.each([
    ['input.paymentId', { paymentId: '' }, /UUID/],
    ['input.paymentId', { paymentId: 'payment-1' }, /UUID/],
    ['input.amountInMinor', { amountInMinor: 0 }, /positive whole number/],
    ['input.reference', { reference: '' }, /1 to 18 characters/],
    ['input.reference', { reference: 'a'.repeat(19) }, /at most 18 characters.*got 19/],
    ['input.idempotencyKey', { idempotencyKey: 'retry-1' }, /UUID/],
  ])('refuses a bad %s', (field, change, message) => {
    const error = inputError(() => validateRefundInput({ ...REFUND, ...change }));
    expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
    expect(error.message).toMatch(message);
  });

  it('accepts an 18-character reference of multi-byte characters', () => {
    expect(() => validateRefundInput({ ...REFUND, reference: 'ü'.repeat(18) })).not.toThrow();
    expect(() => validateRefundInput({ ...REFUND, reference: 'Café №42 ✓ 😀 €5' })).not.toThrow();
  });

  it.each([
    ['a right-to-left override', 'Order \u202e24', 'U+202E at character 7'],
    ['a zero-width space', 'Order\u200b42', 'U+200B at character 6'],
    ['a zero-width joiner', 'Order 42\u200d', 'U+200D at character 9'],
    ['a byte order mark', '\ufeffOrder 42', 'U+FEFF at character 1'],
    ['a lone high surrogate', 'Order \ud83d', 'U+D83D at character 7'],
    ['a lone low surrogate', '\ude00 Order', 'U+DE00 at character 1'],
    ['a tab', 'Order\t42', 'U+0009 at character 6'],
    ['a C1 control character', 'Order\u008542', 'U+0085 at character 6'],
    ['a line separator', 'Order\u202842', 'U+2028 at character 6'],
  ])('refuses a reference with %s, saying what is accepted and which character', (_case, reference, found) => {
    const error = inputError(() => validateRefundInput({ ...REFUND, reference }));
    expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.reference' });
    expect(error.message).toContain('must be printable text (letters, digits, spaces, punctuation and symbols');
    expect(error.message).toContain(`got ${found}`);
  });
});

describe('names and ids', () => {
  it('trims a holder name and refuses an empty or overlong one, naming `name`', () => {
    expect(validateHolderName('  John Doe ')).toBe('John Doe');
    expect(inputError(() => validateHolderName(' ')).extensions.field).toBe('name');
    expect(inputError(() => validateHolderName('n'.repeat(141))).message).toMatch(/at most 140/);
  });

  it('compares holder names without regard to case, composition or spacing', () => {
    expect(sameHolderName('John Doe', '  john   DOE')).toBe(true);
    expect(sameHolderName('Zoë Ng', 'Zoe\u0308 Ng')).toBe(true);
    expect(sameHolderName('John Doe', 'Jon Doe')).toBe(false);
  });

  it('checks query ids as UUIDs', () => {
    expect(validatePaymentId('3F1C2B4E-8D5A-4C6F-9E7B-1A2D3C4E5F60')).toBe('3f1c2b4e-8d5a-4c6f-9e7b-1a2d3c4e5f60');
    expect(inputError(() => validateTransactionId('42')).extensions.field).toBe('transactionId');
  });
});
