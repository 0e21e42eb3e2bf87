import type { ProviderRefundRequest } from '../platform/provider/provider-types';
import { InputProblems } from '../platform/validation/input-problems';
import { characterCount, firstUnprintable, isPositiveSafeInteger, isUuid, shown } from '../platform/validation/text-rules';

/** Spec, Limits: a refund reference is at most 18 characters (it is shown on the payer's statement). */
export const MAX_REFUND_REFERENCE_CHARACTERS = 18;

/** refundPayment's input as the client sent it (RefundPaymentInput has this shape). */
export interface RefundInput {
  paymentId: string;
  amountInMinor?: number | null;
  reference: string;
  idempotencyKey?: string | null;
}

export interface ValidRefundInput {
  /** Lower-cased: payment ids are UUIDs, and one UUID is one payment whatever its case. */
  paymentId: string;
  request: ProviderRefundRequest;
  /** Lower-cased when given; undefined when the gateway is to choose one. */
  idempotencyKey?: string;
}

/** refundPayment's input, every field checked; throws BAD_USER_INPUT naming `input.<field>`. */
export function validateRefundInput(input: RefundInput): ValidRefundInput {
  const problems = new InputProblems();
  const { paymentId, amountInMinor, reference, idempotencyKey } = input;

  if (!isUuid(paymentId)) problems.add('input.paymentId', `must be the payment's id, a UUID; got ${shown(paymentId)}`);
  if (amountInMinor !== undefined && amountInMinor !== null && !isPositiveSafeInteger(amountInMinor)) {
    problems.add('input.amountInMinor', `must be a positive whole number of minor units, or omitted to refund the whole payment; got ${shown(amountInMinor)}`);
  }
  if (reference.trim() === '') {
    problems.add(
      'input.reference',
      `must be 1 to ${MAX_REFUND_REFERENCE_CHARACTERS} characters, not only spaces (it is shown on the payer's statement); got ${shown(reference)}`,
    );
  } else if (characterCount(reference) > MAX_REFUND_REFERENCE_CHARACTERS) {
    problems.add(
      'input.reference',
      `must be at most ${MAX_REFUND_REFERENCE_CHARACTERS} characters (it is shown on the payer's statement); got ${characterCount(reference)}`,
    );
  } else {
    const unprintable = firstUnprintable(reference);
    if (unprintable) {
      problems.add(
        'input.reference',
        "must be printable text (letters, digits, spaces, punctuation and symbols; it is shown on the payer's statement): " +
          'no control characters (tabs, line breaks), no invisible format characters (such as U+200B zero-width space or ' +
          `U+202E right-to-left override) and no unpaired UTF-16 surrogates; got ${unprintable}`,
      );
    }
  }
  if (idempotencyKey !== undefined && idempotencyKey !== null && !isUuid(idempotencyKey)) {
    problems.add('input.idempotencyKey', `must be a UUID, or omitted to have one generated; got ${shown(idempotencyKey)}`);
  }
  problems.throwIfAny();

  return {
    paymentId: paymentId.toLowerCase(),
    request: { ...(amountInMinor === undefined || amountInMinor === null ? {} : { amount_in_minor: amountInMinor }), reference },
    ...(idempotencyKey === undefined || idempotencyKey === null ? {} : { idempotencyKey: idempotencyKey.toLowerCase() }),
  };
}
