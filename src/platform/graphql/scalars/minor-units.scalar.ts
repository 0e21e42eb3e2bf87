import { GraphQLScalarType, Kind } from 'graphql';
import { describeLiteral, describeValue, scalarError } from './scalar-support';

const ACCEPTS =
  `MinorUnits must be a whole number of minor units, a safe integer from ${Number.MIN_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}, ` +
  'given as a number (not a string, no fraction)';

function isSafeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

/** Beyond 2^53-1 a double can no longer tell neighbouring integers apart, so an amount there is not exact. */
export const MinorUnitsScalar = new GraphQLScalarType<number, number>({
  name: 'MinorUnits',
  description: "An integer amount in the currency's smallest unit (pence for GBP). Any safe integer up to 2^53-1; GraphQL's Int is only 32-bit.",
  serialize(value) {
    if (isSafeInteger(value)) return value;
    if (typeof value === 'bigint' && value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)) {
      return Number(value);
    }
    throw scalarError('INTERNAL_SERVER_ERROR', `MinorUnits cannot represent ${describeValue(value)}: expected a safe integer`);
  },
  parseValue(value) {
    if (isSafeInteger(value)) return value;
    throw scalarError('BAD_USER_INPUT', `${ACCEPTS}; got ${describeValue(value)}`);
  },
  parseLiteral(node) {
    if (node.kind === Kind.INT) {
      // Any literal past the safe range reads as a double of magnitude >= 2^53, which isSafeInteger refuses.
      const value = Number(node.value);
      if (isSafeInteger(value)) return value === 0 ? 0 : value;
    }
    throw scalarError('BAD_USER_INPUT', `${ACCEPTS}; got ${describeLiteral(node)}`);
  },
});
