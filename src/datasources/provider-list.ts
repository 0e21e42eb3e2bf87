/*
 * A data-API list kept as the provider's bytes and parsed only where it is read. The scale query reads 20 of each
 * account's 500 transactions; parsing all 26,000 (decimal-keeping) and holding them as objects in the response
 * cache made bankgraph slower than a gateway that does not cache at all, and larger. Here one scan finds where
 * each element of `results` starts and ends, and where its number literals are (strings skipped with indexOf, as in
 * parseDecimalJson); a page is parsed when a resolver asks for it, its numbers quoted from those positions (the
 * same DecimalStrings parseDecimalJson gives) without scanning the text again.
 */
import { JsonSyntaxError, numberEnd, plainDecimal } from './decimal-json';

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
  /** Element i is text.slice(bounds[2i], bounds[2i + 1]). */
  private readonly bounds: Int32Array;
  /** Number literal j is text.slice(numbers[2j], numbers[2j + 1]). */
  private readonly numbers: Int32Array;
  /** Element i's number literals are numbers firstNumber[i] to firstNumber[i + 1] - 1. */
  private readonly firstNumber: Int32Array;
  readonly length: number;

  private constructor(
    private readonly text: string,
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
  static fromResultsBody<T>(text: string): LazyProviderList<T> {
    return new LazyProviderList<T>(text, scanResults(text));
  }

  slice(start?: number, end?: number): T[] {
    const [from, to] = range(this.length, start, end);
    if (to <= from) return [];
    const { text, numbers } = this;
    const parts = ['['];
    let copiedUpTo = this.bounds[2 * from]!;
    for (let j = this.firstNumber[from]!; j < this.firstNumber[to]!; j += 1) {
      const numberStart = numbers[2 * j]!;
      const numberStop = numbers[2 * j + 1]!;
      parts.push(text.slice(copiedUpTo, numberStart), '"', plainDecimal(text.slice(numberStart, numberStop)), '"');
      copiedUpTo = numberStop;
    }
    parts.push(text.slice(copiedUpTo, this.bounds[2 * (to - 1) + 1]), ']');
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
function scanResults(text: string): ResultsScan {
  const bounds: number[] = [];
  const numbers: number[] = [];
  const firstNumber: number[] = [];
  let depth = 0;
  /** Depth 2 inside the results array: commas there separate its elements. */
  let inResults = false;
  let sawResults = false;
  let elementStart = -1;
  let lastKey: string | undefined;
  const startElement = (at: number): void => {
    firstNumber.push(numbers.length / 2);
    elementStart = at;
  };
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACE) throw new JsonSyntaxError('the answer is not a JSON object');
  for (; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = endOfString(text, i + 1);
      if (end < 0) throw new JsonSyntaxError('unterminated string');
      if (depth === 1) lastKey = text.slice(i + 1, end - 1);
      if (inResults && depth === 2 && elementStart < 0) startElement(i);
      i = end - 1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (inResults && depth === 2 && elementStart < 0) startElement(i);
      depth += 1;
      if (depth === 2 && c === OPEN_BRACKET && lastKey === 'results' && !sawResults) {
        inResults = sawResults = true;
        elementStart = -1;
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth === 2 && inResults) {
        if (c !== CLOSE_BRACKET) throw new JsonSyntaxError('results is not a closed array');
        if (elementStart >= 0) bounds.push(elementStart, trimEnd(text, i));
        else if (bounds.length > 0) throw new JsonSyntaxError('results ends with a comma');
        inResults = false;
        elementStart = -1;
      }
      depth -= 1;
      if (depth < 0) throw new JsonSyntaxError('unbalanced brackets');
      if (depth === 0) {
        if (skipSpace(text, i + 1) !== text.length) throw new JsonSyntaxError('text after the answer');
        break;
      }
    } else if (c === COMMA) {
      if (inResults && depth === 2) {
        if (elementStart < 0) throw new JsonSyntaxError('an empty element in results');
        bounds.push(elementStart, trimEnd(text, i));
        elementStart = -1;
      } else if (depth === 1) {
        lastKey = undefined;
      }
    } else if (c === COLON || c <= 0x20) {
      continue;
    } else {
      // A number, true, false or null element.
      if (inResults && depth === 2 && elementStart < 0) startElement(i);
      if (inResults && (c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9))) {
        // Anything malformed is left in place for JSON.parse to refuse when the element is read.
        const end = numberEnd(text, i);
        if (end > 0) {
          numbers.push(i, end);
          i = end - 1;
        }
      }
    }
  }
  if (depth !== 0) throw new JsonSyntaxError('the answer ends early');
  if (!sawResults) throw new JsonSyntaxError('the answer has no results array');
  firstNumber.push(numbers.length / 2);
  return { bounds, numbers, firstNumber };
}

function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && text.charCodeAt(i) <= 0x20) i += 1;
  return i;
}

/** The end of an element that runs up to (not including) `before`, without the whitespace before it. */
function trimEnd(text: string, before: number): number {
  let end = before;
  while (end > 0 && text.charCodeAt(end - 1) <= 0x20) end -= 1;
  return end;
}

/** The index just past the quote that closes a string whose content starts at `from`, or -1. */
function endOfString(text: string, from: number): number {
  let search = from;
  for (;;) {
    const quote = text.indexOf('"', search);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote + 1;
    search = quote + 1;
  }
}
