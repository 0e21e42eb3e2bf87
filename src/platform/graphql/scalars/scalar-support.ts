import { GraphQLError, print, type ValueNode } from 'graphql';
import type { ErrorCode } from '../../errors/gateway-errors';

// Echoing a client's whole input back would let one bad value blow up the error payload (and the logs).
const MAX_SHOWN_CHARS = 80;

function shorten(text: string): string {
  return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}…` : text;
}

/** How a received runtime value (a variable, or a value headed for output) reads in an error message. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return shorten(JSON.stringify(value));
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (value instanceof Date) return `a Date (${Number.isNaN(value.getTime()) ? 'invalid' : value.toISOString()})`;
  if (typeof value === 'object') {
    try {
      return shorten(JSON.stringify(value));
    } catch {
      return Array.isArray(value) ? 'a list' : 'an object';
    }
  }
  return `a ${typeof value}`;
}

/** How a literal in the query text reads in an error message: as the client wrote it. */
export function describeLiteral(node: ValueNode): string {
  return shorten(print(node));
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

/** True for a real day of the proleptic Gregorian calendar (so 2026-02-30 and 2025-02-29 are not). */
export function isCalendarDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return day <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!);
}

/**
 * A scalar's refusal, as a GraphQL error carrying its code: graphql-js reports a GraphQLError from a scalar as it is
 * (a literal in validation, a variable with its name prefixed), where it would reword any other error; and its code
 * says whose fault it is: the client's input (BAD_USER_INPUT), or a value the gateway had to send (masked).
 */
export function scalarError(code: Extract<ErrorCode, 'BAD_USER_INPUT' | 'INTERNAL_SERVER_ERROR'>, message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code } });
}
