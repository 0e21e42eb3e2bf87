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
export function plainDecimal(literal: string): DecimalString {
  // Almost every amount has no exponent: no regex for those (this runs for every number of every list read).
  if (literal.indexOf('e') < 0 && literal.indexOf('E') < 0) return literal as DecimalString;
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

/** A JSON number literal, matched where a scan outside strings finds a minus sign or a digit. */
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;

/**
 * JSON.parse, except that numbers come back as DecimalString with their source digits. A scan turns every number
 * token outside strings into a string token, and the native parser does the rest, far faster than a parser written
 * in JavaScript or a regex replace per token. Strings are skipped with indexOf. Anything malformed is left for
 * JSON.parse to refuse (a leading zero, say, becomes two adjacent string tokens, which it rejects).
 */
export function parseDecimalJson(text: string): unknown {
  const parts: string[] = [];
  let copiedUpTo = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = endOfString(text, i + 1);
    } else if (c === MINUS || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = i;
      const match = NUMBER.exec(text);
      if (!match) {
        i += 1;
        continue;
      }
      parts.push(text.slice(copiedUpTo, i), '"', plainDecimal(match[0]), '"');
      i = copiedUpTo = NUMBER.lastIndex;
    } else {
      i += 1;
    }
  }
  parts.push(text.slice(copiedUpTo));
  try {
    return JSON.parse(parts.join(''));
  } catch (error) {
    throw new JsonSyntaxError(`not valid JSON: ${(error as Error).message}`);
  }
}

/** The index just past the quote that closes a string whose content starts at `from` (or the end of the text). */
function endOfString(text: string, from: number): number {
  let search = from;
  for (;;) {
    const quote = text.indexOf('"', search);
    if (quote < 0) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote + 1;
    search = quote + 1;
  }
}
