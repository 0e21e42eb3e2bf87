import type { SandboxRequest } from '../http/request';
import { Problem } from '../http/respond';

/**
 * Field validation shared by the v1 payout and v3 refund bodies. Every violation is collected, so one 400 lists all
 * that is wrong (`errors`: field -> messages), and each message says what was received and what is accepted.
 */

/** Any RFC 9562 UUID (versions 1 to 8, variant 10xx), in either case. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

export function isPositiveSafeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

/** Characters as a reader counts them (code points), not UTF-16 units: "é" or an emoji is one character. */
export function characterCount(text: string): number {
  return [...text].length;
}

/** A short, safe rendering of what the client sent, for error details. */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return value.length > 60 ? `a ${value.length}-character string` : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  return Array.isArray(value) ? 'an array' : 'an object';
}

export class FieldErrors {
  private readonly errors: Record<string, string[]> = {};

  add(field: string, message: string): void {
    (this.errors[field] ??= []).push(message);
  }

  /** Throws 400 invalid-parameters naming every field in error, when there is any. */
  throwIfAny(): void {
    const fields = Object.keys(this.errors);
    if (fields.length === 0) return;
    throw new Problem(400, 'invalid-parameters', `Invalid request parameters: ${fields.join(', ')}; see errors for each.`, this.errors);
  }
}

/** The JSON body as an object; bad JSON or a wrong content type surface from `req.json()` as 400 by the pipeline. */
export function jsonObjectBody(req: SandboxRequest, expected: string): Record<string, unknown> {
  const body = req.json();
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new Problem(400, 'invalid-parameters', `The body must be a JSON object ${expected}; got ${describe(body)}.`);
  }
  return body as Record<string, unknown>;
}
