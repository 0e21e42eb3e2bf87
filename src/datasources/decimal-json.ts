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

const MAX_DEPTH = 256;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

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

class Parser {
  private index = 0;

  constructor(private readonly text: string) {}

  parseDocument(): unknown {
    const value = this.value(0);
    this.skipWhitespace();
    if (this.index !== this.text.length) this.fail('unexpected trailing characters');
    return value;
  }

  private fail(reason: string): never {
    throw new JsonSyntaxError(`${reason} at position ${this.index}`);
  }

  private skipWhitespace(): void {
    while (this.index < this.text.length) {
      const c = this.text.charCodeAt(this.index);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return;
      this.index += 1;
    }
  }

  private value(depth: number): unknown {
    if (depth > MAX_DEPTH) this.fail('nesting too deep');
    this.skipWhitespace();
    const c = this.text[this.index];
    if (c === '{') return this.object(depth);
    if (c === '[') return this.array(depth);
    if (c === '"') return this.string();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
    for (const [word, value] of [['true', true], ['false', false], ['null', null]] as const) {
      if (this.text.startsWith(word, this.index)) {
        this.index += word.length;
        return value;
      }
    }
    return this.fail(c === undefined ? 'unexpected end of input' : `unexpected character ${JSON.stringify(c)}`);
  }

  private number(): DecimalString {
    NUMBER.lastIndex = this.index;
    const match = NUMBER.exec(this.text);
    if (!match) this.fail('malformed number');
    this.index = NUMBER.lastIndex;
    return plainDecimal(match[0]);
  }

  private string(): string {
    STRING.lastIndex = this.index;
    const match = STRING.exec(this.text);
    if (!match) this.fail('malformed string');
    this.index = STRING.lastIndex;
    // The regex has validated every escape, so JSON.parse of the token only decodes it.
    return JSON.parse(match[0]) as string;
  }

  private expect(char: string): void {
    this.skipWhitespace();
    if (this.text[this.index] !== char) this.fail(`expected ${JSON.stringify(char)}`);
    this.index += 1;
  }

  private closes(char: string): boolean {
    this.skipWhitespace();
    if (this.text[this.index] !== char) return false;
    this.index += 1;
    return true;
  }

  private object(depth: number): Record<string, unknown> {
    this.index += 1;
    const result: Record<string, unknown> = {};
    if (this.closes('}')) return result;
    do {
      this.skipWhitespace();
      if (this.text[this.index] !== '"') this.fail('expected a property name');
      const key = this.string();
      this.expect(':');
      // defineProperty, not assignment: a `__proto__` key must become data, as JSON.parse makes it.
      Object.defineProperty(result, key, { value: this.value(depth + 1), enumerable: true, writable: true, configurable: true });
    } while (this.closes(','));
    this.expect('}');
    return result;
  }

  private array(depth: number): unknown[] {
    this.index += 1;
    const result: unknown[] = [];
    if (this.closes(']')) return result;
    do result.push(this.value(depth + 1));
    while (this.closes(','));
    this.expect(']');
    return result;
  }
}

/** JSON.parse, except that numbers come back as DecimalString with their source digits. */
export function parseDecimalJson(text: string): unknown {
  return new Parser(text).parseDocument();
}
