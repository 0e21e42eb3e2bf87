/** Courtesy titles and suffixes a bank may or may not put before or after a name. */
const TITLES = new Set(['mr', 'mrs', 'ms', 'miss', 'mx', 'dr', 'prof', 'sir', 'dame', 'rev', 'jr', 'sr']);

/**
 * A holder's full name as the bank gave it, reduced to what says who the person is: case, diacritics, punctuation,
 * titles and word order dropped ("MR. DOE, John" and "John Doe" are one name; "Jane Doe" is another). Undefined when
 * nothing of a name is left. Two people can share a name, so an equal name is never enough alone (docs/identity.md).
 */
export function normaliseHolderName(fullName: string | undefined): string | undefined {
  if (fullName === undefined) return undefined;
  const words = fullName
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/['’]/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '' && !TITLES.has(word));
  return words.length === 0 ? undefined : words.sort().join(' ');
}
