import type { SandboxRequest } from '../http/request';
import { Problem } from '../http/respond';
import { characterCount, describe, FieldErrors, isPositiveSafeInteger, isUuid, jsonObjectBody } from './field-checks';

/** Spec: shown to the beneficiary on their statement, at most 18 characters. */
export const MAX_REFUND_REFERENCE = 18;

export interface RefundRequest {
  /** Omitted: the whole payment. */
  amount_in_minor?: number;
  reference: string;
}

/** The Idempotency-Key header, lower-cased: one UUID is one key whatever its case. */
export function requireIdempotencyKey(req: SandboxRequest): string {
  const key = req.header('idempotency-key');
  if (isUuid(key)) return key.toLowerCase();
  const detail =
    key === undefined
      ? 'The Idempotency-Key header is required: a UUID identifying this refund request, reused only to retry it.'
      : `The Idempotency-Key header must be a UUID; got ${describe(key)}.`;
  throw new Problem(400, 'invalid-parameters', detail, { 'Idempotency-Key': [key === undefined ? 'is required' : 'must be a UUID'] });
}

/** Body `{ amount_in_minor?, reference }`; unknown extra fields are ignored. */
export function validateRefundRequest(req: SandboxRequest): RefundRequest {
  const body = jsonObjectBody(req, '{ amount_in_minor?, reference }');
  const errors = new FieldErrors();
  const { amount_in_minor, reference } = body;
  if (amount_in_minor !== undefined && !isPositiveSafeInteger(amount_in_minor)) {
    errors.add(
      'amount_in_minor',
      `must be a positive integer in the payment currency's minor unit, or omitted to refund the whole payment; got ${describe(amount_in_minor)}`,
    );
  }
  if (typeof reference !== 'string' || reference.length === 0) {
    errors.add('reference', `is required: a string of 1 to ${MAX_REFUND_REFERENCE} characters shown on the payer's statement; got ${describe(reference)}`);
  } else if (characterCount(reference) > MAX_REFUND_REFERENCE) {
    errors.add('reference', `must be at most ${MAX_REFUND_REFERENCE} characters; got ${characterCount(reference)}`);
  }
  errors.throwIfAny();
  return {
    ...(amount_in_minor === undefined ? {} : { amount_in_minor: amount_in_minor as number }),
    reference: reference as string,
  };
}
