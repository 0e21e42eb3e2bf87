import { GraphQLScalarType, Kind } from 'graphql';
import { describeLiteral, describeValue, scalarError } from './scalar-support';

const YEAR_MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;
const ACCEPTS = 'YearMonth must be a year and month in the form YYYY-MM, month 01 to 12';

export function isYearMonth(value: unknown): value is string {
  return typeof value === 'string' && YEAR_MONTH.test(value);
}

export const YearMonthScalar = new GraphQLScalarType<string, string>({
  name: 'YearMonth',
  description: 'A year and month, YYYY-MM.',
  serialize(value) {
    if (isYearMonth(value)) return value;
    throw scalarError('INTERNAL_SERVER_ERROR', `YearMonth cannot represent ${describeValue(value)}: expected a string YYYY-MM`);
  },
  parseValue(value) {
    if (isYearMonth(value)) return value;
    throw scalarError('BAD_USER_INPUT', `${ACCEPTS}; got ${describeValue(value)}`);
  },
  parseLiteral(node) {
    if (node.kind === Kind.STRING && isYearMonth(node.value)) return node.value;
    throw scalarError('BAD_USER_INPUT', `${ACCEPTS}; got ${describeLiteral(node)}`);
  },
});
