/**
 * Small checks shared by the input validators. They only answer "what is wrong"; the validators turn the answer
 * into a BAD_USER_INPUT that names the field.
 */

/** Any RFC 9562 UUID (versions 1 to 8, variant 10xx), in either case: what the provider accepts as an id or key. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/**
 * Characters as a reader counts them (code points), not UTF-16 units: "é" or an emoji is one character, which is
 * how a statement reference's limit is meant.
 */
export function characterCount(text: string): number {
  return [...text].length;
}

/** C0/C1 control characters (tab and newline included) have no place in a name or a statement reference. */
export function hasControlCharacters(text: string): boolean {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return /[\u0000-\u001f\u007f-\u009f]/.test(text);
}

/**
 * What cannot be printed on a bank statement: control characters (tabs, line breaks, U+2028/U+2029 included),
 * invisible format characters (Unicode category Cf: U+200B zero-width space, U+202E right-to-left override, which
 * reorders what the payer reads) and unpaired UTF-16 surrogates (malformed text, which no bank can encode).
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

/** Undefined when `text` is all printable; otherwise the first offending character as U+XXXX and its position (1-based, in characters). */
export function firstUnprintable(text: string): string | undefined {
  let position = 0;
  for (const character of text) {
    position += 1;
    if (UNPRINTABLE.test(character)) return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} at character ${position}`;
  }
  return undefined;
}

export function isPositiveSafeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

/** A short, safe rendering of what the client sent, for error messages (long values are not echoed whole). */
export function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return value.length > 60 ? `a ${characterCount(value)}-character string` : JSON.stringify(value);
  return String(value);
}
