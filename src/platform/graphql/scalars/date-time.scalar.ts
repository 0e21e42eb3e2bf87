import { GraphQLScalarType, Kind } from 'graphql';
import { describeLiteral, describeValue, isCalendarDate, scalarError } from './scalar-support';

// ISO 8601 extended format. Seconds, fraction and offset are optional because the provider sends timestamps with
// a variable number of fractional digits and sometimes no offset; `,` is ISO's other decimal sign.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?$/;
const ACCEPTS =
  'DateTime must be an ISO 8601 date-time string such as "2026-01-31T09:15:00Z" or "2026-01-31T09:15:00.123+01:00" ' +
  '(seconds, fraction and UTC offset optional)';
const COLON = 0x3a;

/** The number written by the `count` digits at `at` (the pattern has checked they are digits). */
function digitsAt(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i += 1) value = value * 10 + text.charCodeAt(i) - 0x30;
  return value;
}

/*
 * Every timestamp of every answer passes here (one per transaction, balance and account), so the fields are read
 * where the pattern has put them rather than captured: capture groups made ten strings and a match array apiece.
 */
export function isDateTime(value: unknown): value is string {
  if (typeof value !== 'string' || !DATE_TIME.test(value)) return false;
  // Every field has a fixed place but the offset, which starts at its sign: the only + or - after the date.
  const offsetSign = Math.max(value.indexOf('+', 16), value.indexOf('-', 16));
  const offsetMinutes = offsetSign > 0 && value.length - offsetSign > 3;
  return (
    isCalendarDate(digitsAt(value, 0, 4), digitsAt(value, 5, 2), digitsAt(value, 8, 2)) &&
    digitsAt(value, 11, 2) <= 23 &&
    digitsAt(value, 14, 2) <= 59 &&
    // 60 is a leap second, which ISO 8601 and RFC 3339 both allow.
    (value.charCodeAt(16) !== COLON || digitsAt(value, 17, 2) <= 60) &&
    (offsetSign < 0 || digitsAt(value, offsetSign + 1, 2) <= 23) &&
    (!offsetMinutes || digitsAt(value, value.length - 2, 2) <= 59)
  );
}

/**
 * The provider's timestamp strings pass through untouched (a JS Date would drop digits past milliseconds and
 * rewrite the offset). A JS Date is accepted on output only for timestamps the gateway makes itself.
 */
export const DateTimeScalar = new GraphQLScalarType<string, string>({
  name: 'DateTime',
  description: 'ISO 8601 date-time, passed through exactly as the provider sent it: fractional digits and UTC offset (or its absence) are kept.',
  serialize(value) {
    if (isDateTime(value)) return value;
    if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
    throw scalarError('INTERNAL_SERVER_ERROR', `DateTime cannot represent ${describeValue(value)}: expected an ISO 8601 date-time string`);
  },
  parseValue(value) {
    if (isDateTime(value)) return value;
    throw scalarError('BAD_USER_INPUT', `${ACCEPTS}; got ${describeValue(value)}`);
  },
  parseLiteral(node) {
    if (node.kind === Kind.STRING && isDateTime(node.value)) return node.value;
    throw scalarError('BAD_USER_INPUT', `${ACCEPTS}; got ${describeLiteral(node)}`);
  },
});
