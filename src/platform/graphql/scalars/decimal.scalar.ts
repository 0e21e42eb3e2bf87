import { GraphQLScalarType, Kind } from 'graphql';
import { describeLiteral, describeValue, scalarError } from './scalar-support';

/** What a Decimal field may hold: the provider's JSON number as parsed, or a decimal string. */
export type DecimalValue = number | string;

const PLAIN_DECIMAL = /^-?\d+(?:\.\d+)?$/;
const EXPONENT_FORM = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/;
const ACCEPTS = 'Decimal must be a string of decimal digits with an optional minus sign and fraction, such as "-2.99"';

/**
 * The decimal text of a JS number, digit for digit as the provider wrote it.
 *
 * Number#toString yields the shortest digit string that reads back as the same double, and JSON.parse picked
 * that double as the nearest to the provider's text; so for any amount of up to 15 significant digits the
 * digits are exactly the provider's (-2.99 -> "-2.99", never "-2.9900000000000002"). No arithmetic touches the
 * value: when toString falls back to exponent form (|x| >= 1e21 or < 1e-6) the decimal point is moved in the
 * digit string instead of scaling the number, since scaling would round.
 */
export function decimalFromNumber(value: number): string {
  const text = String(value);
  const match = EXPONENT_FORM.exec(text);
  if (match === null) return text;
  const [, sign, whole, fraction = '', exponent] = match;
  const digits = whole! + fraction;
  const point = whole!.length + Number(exponent);
  let plain: string;
  if (point <= 0) plain = `0.${'0'.repeat(-point)}${digits}`;
  else if (point >= digits.length) plain = digits + '0'.repeat(point - digits.length);
  else plain = `${digits.slice(0, point)}.${digits.slice(point)}`;
  return sign! + plain;
}

export function isDecimalString(value: unknown): value is string {
  return typeof value === 'string' && PLAIN_DECIMAL.test(value);
}

/** Strings stay verbatim (trailing zeros included) so a source that kept the provider's text loses nothing. */
export const DecimalScalar = new GraphQLScalarType<string, string>({
  name: 'Decimal',
  description: 'An exact decimal amount, serialised as a string such as "-2.99".',
  serialize(value) {
    if (typeof value === 'number' && Number.isFinite(value)) return decimalFromNumber(value);
    if (typeof value === 'bigint') return value.toString();
    if (isDecimalString(value)) return value;
    throw scalarError('INTERNAL_SERVER_ERROR', `Decimal cannot represent ${describeValue(value)}: expected a finite number or a decimal string`);
  },
  // Numbers are refused on input: a JSON number in a variable may already have been rounded by the parser.
  parseValue(value) {
    if (isDecimalString(value)) return value;
    throw scalarError('BAD_USER_INPUT', `${ACCEPTS}; got ${describeValue(value)}`);
  },
  parseLiteral(node) {
    if (node.kind === Kind.STRING && isDecimalString(node.value)) return node.value;
    throw scalarError('BAD_USER_INPUT', `${ACCEPTS}; got ${describeLiteral(node)}`);
  },
});
