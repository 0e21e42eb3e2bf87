import { GraphQLScalarType, Kind } from 'graphql';
import { describeLiteral, describeValue, isCalendarDate, scalarError } from './scalar-support';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ACCEPTS = 'Date must be a calendar date in the form YYYY-MM-DD';

export function isDate(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const match = DATE.exec(value);
  return match !== null && isCalendarDate(Number(match[1]), Number(match[2]), Number(match[3]));
}

/** Kept as the string it was given: a calendar date has no time zone, and a JS Date would invent one. */
export const DateScalar = new GraphQLScalarType<string, string>({
  name: 'Date',
  description: 'A calendar date, YYYY-MM-DD.',
  serialize(value) {
    if (isDate(value)) return value;
    throw scalarError('INTERNAL_SERVER_ERROR', `Date cannot represent ${describeValue(value)}: expected a calendar date string YYYY-MM-DD`);
  },
  parseValue(value) {
    if (isDate(value)) return value;
    throw scalarError('BAD_USER_INPUT', `${ACCEPTS}; got ${describeValue(value)}`);
  },
  parseLiteral(node) {
    if (node.kind === Kind.STRING && isDate(node.value)) return node.value;
    throw scalarError('BAD_USER_INPUT', `${ACCEPTS}; got ${describeLiteral(node)}`);
  },
});
