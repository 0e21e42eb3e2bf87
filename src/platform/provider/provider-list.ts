/*
 * A data-API list kept as the provider's bytes (the chunks they arrived in, see provider-body.ts) and parsed only
 * where it is read. The scale query reads 20 of each account's 500 transactions; parsing all 26,000
 * (decimal-keeping) and holding them as objects in the response cache made bankgraph slower than a gateway that
 * does not cache at all, and larger. Here one pass over the bytes finds where each element of `results` starts and
 * ends, and where its number literals are; a page is decoded and parsed when a resolver asks for it, its numbers
 * quoted from those positions (the same DecimalStrings parseDecimalJson gives) without scanning the text again.
 * Strings, escapes and numbers may run across chunks.
 */
import { JsonSyntaxError, plainDecimal } from './decimal-json';
import { ProviderBody } from './provider-body';

/**
 * What resolvers use of a provider list. A plain array is one (a list read back from a serialising cache such as
 * Redis comes back as an array), and so is a LazyProviderList.
 */
export type ProviderList<T> = Pick<ReadonlyArray<T>, 'length' | 'slice' | 'map' | 'find' | 'findIndex' | 'some' | typeof Symbol.iterator>;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

export class LazyProviderList<T> implements ProviderList<T> {
  /** Element i is bytes bounds[2i] to bounds[2i + 1] of the body. */
  private readonly bounds: Int32Array;
  /** Number literal j is bytes numbers[2j] to numbers[2j + 1]. */
  private readonly numbers: Int32Array;
  /** Element i's number literals are numbers firstNumber[i] to firstNumber[i + 1] - 1. */
  private readonly firstNumber: Int32Array;
  readonly length: number;

  private constructor(
    private readonly body: ProviderBody,
    scan: ResultsScan,
  ) {
    // The constructor, not Int32Array.from: from() walks the array through its iterator, which cost as much as
    // a tenth of the scan of a 500-element list.
    this.bounds = new Int32Array(scan.bounds);
    this.numbers = new Int32Array(scan.numbers);
    this.firstNumber = new Int32Array(scan.firstNumber);
    this.length = scan.bounds.length / 2;
  }

  /**
   * The `results` array of a `{"results": [...], ...}` body. Structure is checked (balanced brackets, strings
   * closed, a results array present); each element's own syntax is checked when it is parsed.
   */
  static fromResultsBody<T>(answer: ProviderBody | string): LazyProviderList<T> {
    const body = typeof answer === 'string' ? ProviderBody.fromString(answer) : answer;
    return new LazyProviderList<T>(body, scanResults(body));
  }

  slice(start?: number, end?: number): T[] {
    const [from, to] = range(this.length, start, end);
    if (to <= from) return [];
    const { body, numbers } = this;
    const pageStart = this.bounds[2 * from]!;
    const pageEnd = this.bounds[2 * (to - 1) + 1]!;
    // The page decoded once, and its pieces sliced from it: decoding each piece on its own was a Buffer view and a
    // native call apiece. Byte offsets are offsets into the text only where every byte became one character (ASCII,
    // as provider JSON nearly always is); any other page is decoded piece by piece.
    const page = body.text(pageStart, pageEnd);
    const text = page.length === pageEnd - pageStart ? (start: number, end: number) => page.slice(start - pageStart, end - pageStart) : body.text.bind(body);
    const parts = ['['];
    let copiedUpTo = pageStart;
    for (let j = this.firstNumber[from]!; j < this.firstNumber[to]!; j += 1) {
      const numberStart = numbers[2 * j]!;
      const numberStop = numbers[2 * j + 1]!;
      parts.push(text(copiedUpTo, numberStart), '"', plainDecimal(text(numberStart, numberStop)), '"');
      copiedUpTo = numberStop;
    }
    parts.push(text(copiedUpTo, pageEnd), ']');
    try {
      return JSON.parse(parts.join('')) as T[];
    } catch (error) {
      throw new JsonSyntaxError(`not valid JSON: ${(error as Error).message}`);
    }
  }

  map<U>(mapper: (value: T, index: number, array: readonly T[]) => U): U[] {
    return this.slice().map(mapper);
  }

  find(predicate: (value: T, index: number, array: readonly T[]) => unknown): T | undefined {
    return this.slice().find(predicate);
  }

  findIndex(predicate: (value: T, index: number, array: readonly T[]) => unknown): number {
    return this.slice().findIndex(predicate);
  }

  some(predicate: (value: T, index: number, array: readonly T[]) => unknown): boolean {
    return this.slice().some(predicate);
  }

  [Symbol.iterator](): ArrayIterator<T> {
    return this.slice()[Symbol.iterator]();
  }

  /** A serialising cache (Redis) stores the parsed list; it is read back as a plain array. */
  toJSON(): T[] {
    return this.slice();
  }
}

/** Array.prototype.slice's reading of start and end. */
function range(length: number, start = 0, end = length): [number, number] {
  const clamp = (index: number): number => (index < 0 ? Math.max(length + index, 0) : Math.min(index, length));
  return [clamp(Math.trunc(start)), clamp(Math.trunc(end))];
}

interface ResultsScan {
  bounds: number[];
  numbers: number[];
  /** One entry per element and one past the last. */
  firstNumber: number[];
}

/** Where each element of the top-level object's `results` array starts and ends, and where its numbers are. */
function scanResults(body: ProviderBody): ResultsScan {
  const bounds: number[] = [];
  const numbers: number[] = [];
  const firstNumber: number[] = [];
  let depth = 0;
  /** Depth 2 inside the results array: commas there separate its elements. */
  let inResults = false;
  let sawResults = false;
  let elementStart = -1;
  let lastKey: string | undefined;
  /** Where the string being read opened while it runs on into the next chunk, or -1. */
  let stringStart = -1;
  let ended = false;
  const startElement = (at: number): void => {
    firstNumber.push(numbers.length / 2);
    elementStart = at;
  };
  const closeString = (end: number): void => {
    if (depth === 1) lastKey = body.text(stringStart + 1, end);
    stringStart = -1;
  };
  /** The next byte to read, as an index of the whole body. */
  let cursor = 0;
  while (cursor < body.length && body.byteAt(cursor) <= 0x20) cursor += 1;
  if (body.byteAt(cursor) !== OPEN_BRACE) throw new JsonSyntaxError('the answer is not a JSON object');
  for (let k = body.chunkAt(cursor); k < body.chunks.length && !ended; k += 1) {
    const bytes = body.chunks[k]!;
    const base = body.chunkStart(k);
    const length = bytes.length;
    let i = cursor - base;
    if (stringStart >= 0 && i < length) {
      const quote = closingQuote(bytes, i);
      if (quote >= length) {
        cursor = base + quote;
        continue;
      }
      closeString(base + quote);
      i = quote + 1;
    }
    for (; i < length; i += 1) {
      const c = bytes[i]!;
      if (c === QUOTE) {
        if (inResults && depth === 2 && elementStart < 0) startElement(base + i);
        stringStart = base + i;
        const quote = closingQuote(bytes, i + 1);
        if (quote >= length) {
          i = quote;
          break;
        }
        closeString(base + quote);
        i = quote;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (inResults && depth === 2 && elementStart < 0) startElement(base + i);
        depth += 1;
        if (depth === 2 && c === OPEN_BRACKET && lastKey === 'results' && !sawResults) {
          inResults = sawResults = true;
          elementStart = -1;
        }
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (depth === 2 && inResults) {
          if (c !== CLOSE_BRACKET) throw new JsonSyntaxError('results is not a closed array');
          if (elementStart >= 0) bounds.push(elementStart, trimEnd(body, base + i));
          else if (bounds.length > 0) throw new JsonSyntaxError('results ends with a comma');
          inResults = false;
          elementStart = -1;
        }
        depth -= 1;
        if (depth < 0) throw new JsonSyntaxError('unbalanced brackets');
        if (depth === 0) {
          if (!body.isBlankFrom(base + i + 1)) throw new JsonSyntaxError('text after the answer');
          ended = true;
          break;
        }
      } else if (c === COMMA) {
        if (inResults && depth === 2) {
          if (elementStart < 0) throw new JsonSyntaxError('an empty element in results');
          bounds.push(elementStart, trimEnd(body, base + i));
          elementStart = -1;
        } else if (depth === 1) {
          lastKey = undefined;
        }
      } else if (c === COLON || c <= 0x20) {
        continue;
      } else {
        // A number, true, false or null element.
        if (inResults && depth === 2 && elementStart < 0) startElement(base + i);
        if (inResults && (c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9))) {
          // Anything malformed is left in place for JSON.parse to refuse when the element is read.
          let end = numberEnd(bytes, i, false);
          if (end === CUT_OFF) end = numberEndAcross(body, base + i) - base;
          if (end > 0) {
            numbers.push(base + i, base + end);
            i = end - 1;
          }
        }
      }
    }
    cursor = base + i;
  }
  if (stringStart >= 0) throw new JsonSyntaxError('unterminated string');
  if (!ended) throw new JsonSyntaxError('the answer ends early');
  if (!sawResults) throw new JsonSyntaxError('the answer has no results array');
  firstNumber.push(numbers.length / 2);
  return { bounds, numbers, firstNumber };
}

/** numberEnd's answer when the bytes ran out where more could have continued the literal. */
const CUT_OFF = -2;
const DOT = 0x2e;
const PLUS = 0x2b;

const isDigit = (c: number | undefined): boolean => c !== undefined && c >= DIGIT_0 && c <= DIGIT_9;

/**
 * The end of the JSON number literal at bytes[i] (-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?, the longest that
 * matches), or -1 when none starts there. Unless `final`, running out of bytes where the literal could go on
 * answers CUT_OFF.
 */
function numberEnd(bytes: Uint8Array, i: number, final: boolean): number {
  const length = bytes.length;
  const cut = (at: number): number => (final ? at : CUT_OFF);
  let j = i;
  if (bytes[j] === MINUS) j += 1;
  if (j >= length) return final ? -1 : CUT_OFF;
  if (bytes[j] === DIGIT_0) j += 1;
  else if (isDigit(bytes[j])) while (j < length && isDigit(bytes[j])) j += 1;
  else return -1;
  if (j >= length) return cut(j);
  if (bytes[j] === DOT) {
    if (j + 1 >= length) return cut(j);
    if (isDigit(bytes[j + 1])) {
      j += 2;
      while (j < length && isDigit(bytes[j])) j += 1;
      if (j >= length) return cut(j);
    }
  }
  if (bytes[j] === 0x65 || bytes[j] === 0x45) {
    let k = j + 1;
    if (k < length && (bytes[k] === PLUS || bytes[k] === MINUS)) k += 1;
    if (k >= length) return cut(j);
    if (isDigit(bytes[k])) {
      while (k < length && isDigit(bytes[k])) k += 1;
      if (k >= length) return cut(k);
      j = k;
    }
  }
  return j;
}

/** numberEnd for a literal that the end of its chunk cut off: read again from a window across chunks (an index of the body). */
function numberEndAcross(body: ProviderBody, start: number): number {
  for (let width = 64; ; width *= 2) {
    const windowEnd = Math.min(body.length, start + width);
    const end = numberEnd(body.bytes(start, windowEnd), 0, windowEnd === body.length);
    if (end !== CUT_OFF) return end < 0 ? -1 : start + end;
  }
}

/** The end of an element that runs up to (not including) `before`, without the whitespace before it. */
function trimEnd(body: ProviderBody, before: number): number {
  let end = before;
  while (end > 0 && body.byteAt(end - 1) <= 0x20) end -= 1;
  return end;
}

/**
 * The index of the quote that closes a string whose bytes start at `from`; when the chunk ends first, its length,
 * or its length + 1 if its last byte escapes the next chunk's first (so that reading goes on after that byte).
 */
function closingQuote(bytes: Uint8Array, from: number): number {
  const length = bytes.length;
  let i = from;
  for (; i < length; i += 1) {
    const c = bytes[i];
    if (c === BACKSLASH) i += 1;
    else if (c === QUOTE) return i;
  }
  return i;
}
