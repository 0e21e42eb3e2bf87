/** Courtesy titles a bank may or may not put before a name; generational suffixes (Jr, Sr, II) are never dropped. */
const COURTESY_TITLES = new Set(['mr', 'mrs', 'ms', 'miss', 'mx', 'dr']);

/** Marks a digest made from a name normalised by this rule, telling it apart from one made by the earlier rule. */
export const HOLDER_DIGEST_PREFIX = 'n2.';

/**
 * A holder's full name as the bank gave it, reduced only to how the bank spells it: case, diacritics, punctuation,
 * spacing and leading courtesy titles folded ("MR. John  DOE" and "John Doe" are one name), while word order and
 * generational suffixes are kept ("Doe John", "John Doe Jr" and "John Doe Sr" are three). Undefined when nothing but
 * titles is left. Two people can share a name, so an equal name is never enough alone (docs/identity.md).
 */
export function normaliseHolderName(fullName: string | undefined): string | undefined {
  const words = wordsOf(fullName);
  if (words === undefined) return undefined;
  let first = 0;
  while (first < words.length && COURTESY_TITLES.has(words[first]!)) first++;
  return first === words.length ? undefined : words.slice(first).join(' ');
}

/**
 * The earlier rule (titles and Jr/Sr dropped anywhere, words sorted), which digests stored without
 * HOLDER_DIGEST_PREFIX were made by: such a digest cannot tell father from son or "Ming Lee" from "Lee Ming".
 */
export function earlierNormalisedHolderName(fullName: string | undefined): string | undefined {
  const words = wordsOf(fullName)?.filter((word) => !EARLIER_TITLES.has(word));
  return words === undefined || words.length === 0 ? undefined : words.sort().join(' ');
}

const EARLIER_TITLES = new Set(['mr', 'mrs', 'ms', 'miss', 'mx', 'dr', 'prof', 'sir', 'dame', 'rev', 'jr', 'sr']);

/** The name's words: decomposed and stripped of combining marks, lower case, apostrophes removed, split at anything else. */
function wordsOf(fullName: string | undefined): string[] | undefined {
  if (fullName === undefined) return undefined;
  return fullName
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/['’]/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');
}

/** The digests a grant's holder name is compared by: this rule's (stored with new connections) and the earlier rule's. */
export function holderDigests(fullName: string | undefined, fingerprint: (value: string) => string): { current?: string; earlier?: string } {
  const current = normaliseHolderName(fullName);
  const earlier = earlierNormalisedHolderName(fullName);
  return {
    ...(current === undefined ? {} : { current: `${HOLDER_DIGEST_PREFIX}${fingerprint(current)}` }),
    ...(earlier === undefined ? {} : { earlier: fingerprint(earlier) }),
  };
}
