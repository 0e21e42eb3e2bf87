import { GraphQLScalarType, Kind } from 'graphql';
import { BadUserInputError, InternalServerError } from '../../errors';
import { describeLiteral, describeValue, isCalendarDate } from './scalar-support';

// ISO 8601 extended format. Seconds, fraction and offset are optional because the provider sends timestamps with
// a variable number of fractional digits and sometimes no offset; `,` is ISO's other decimal sign.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(?:Z|[+-](\d{2})(?::?(\d{2}))?)?$/;
const ACCEPTS =
  'DateTime must be an ISO 8601 date-time string such as "2026-01-31T09:15:00Z" or "2026-01-31T09:15:00.123+01:00" ' +
  '(seconds, fraction and UTC offset optional)';

export function isDateTime(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const match = DATE_TIME.exec(value);
  if (match === null) return false;
  const [, year, month, day, hour, minute, second = '0', offsetHour = '0', offsetMinute = '0'] = match;
  return (
    isCalendarDate(Number(year), Number(month), Number(day)) &&
    Number(hour) <= 23 &&
    Number(minute) <= 59 &&
    // 60 is a leap second, which ISO 8601 and RFC 3339 both allow.
    Number(second) <= 60 &&
    Number(offsetHour) <= 23 &&
    Number(offsetMinute) <= 59
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
    throw new InternalServerError(`DateTime cannot represent ${describeValue(value)}: expected an ISO 8601 date-time string`);
  },
  parseValue(value) {
    if (isDateTime(value)) return value;
    throw new BadUserInputError(`${ACCEPTS}; got ${describeValue(value)}`);
  },
  parseLiteral(node) {
    if (node.kind === Kind.STRING && isDateTime(node.value)) return node.value;
    throw new BadUserInputError(`${ACCEPTS}; got ${describeLiteral(node)}`);
  },
});
