/*
 * JSON for the data API, whose amounts are decimal numbers (-2.99, 100.10). JSON.parse turns them into binary
 * floats: -2.99 survives a round trip by luck of shortest-repr printing, but 100.10 comes back as 100.1 and a
 * long amount loses digits outright. Node 20 has no `JSON.parse` source-text access for a reviver, so this is a
 * small strict JSON parser that returns every number as a DecimalString: the literal's own digits, as a string.
 *
 * Why a branded string and not a Decimal class: it serialises as itself (GraphQL Decimal scalar, keyv cache,
 * logs) with no reviving step, compares with ===, and cannot be mistaken for a float by arithmetic (TypeScript
 * refuses `amount * 2`). Every number in a data-API body is a decimal amount, so all of them are wrapped;
 * minor-unit integers live in the payout and payments APIs, which are parsed with plain JSON.parse.
 */

declare const decimalBrand: unique symbol;
/** A decimal number's exact text, e.g. `-2.99`, `100.10`. Exponent literals are written out (`1.5E2` → `150`). */
export type DecimalString = string & { readonly [decimalBrand]: true };

export class JsonSyntaxError extends SyntaxError {
  override readonly name = 'JsonSyntaxError';
}


/** Writes an exponent literal out in plain digits by moving the decimal point; the digits themselves never change. */
function plainDecimal(literal: string): DecimalString {
  const match = /^(-?)(\d+)(?:\.(\d+))?[eE]([+-]?\d+)$/.exec(literal);
  if (!match) return literal as DecimalString;
  const [, sign, whole, fraction = '', exponentText] = match as unknown as [string, string, string, string | undefined, string];
  const exponent = Number(exponentText);
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > 1000) throw new JsonSyntaxError(`number exponent out of range: ${literal}`);
  const digits = whole + fraction;
  const point = whole.length + exponent;
  let text: string;
  if (point <= 0) text = `0.${'0'.repeat(-point)}${digits}`;
  else if (point >= digits.length) text = digits + '0'.repeat(point - digits.length);
  else text = `${digits.slice(0, point)}.${digits.slice(point)}`;
  text = text.replace(/^0+(?=\d)/, '');
  return `${sign}${text}` as DecimalString;
}

/** A JSON string token, or a number token outside strings (in valid JSON no digit stands anywhere else). */
const TOKEN = /"(?:[^"\\]|\\.)*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/**
 * JSON.parse, except that numbers come back as DecimalString with their source digits. Every number token is
 * turned into a string token first and the native parser does the rest: a parser written in JavaScript was a
 * third of the CPU of a large cold query. Anything malformed is left for JSON.parse to refuse (a leading zero, say,
 * becomes two adjacent string tokens, which it rejects).
 */
export function parseDecimalJson(text: string): unknown {
  const quoted = text.replace(TOKEN, (token) => (token.charCodeAt(0) === 0x22 ? token : `"${plainDecimal(token)}"`));
  try {
    return JSON.parse(quoted);
  } catch (error) {
    throw new JsonSyntaxError(`not valid JSON: ${(error as Error).message}`);
  }
}
