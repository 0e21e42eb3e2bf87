/**
 * Account holder name matching for verification.
 *
 * 1. Normalise both names: Unicode NFKD with combining marks removed ("Zoë" -> "zoe") plus the few letters that do
 *    not decompose ("ø", "æ", "ß"...), lower case, apostrophes dropped ("O'Brien" -> "obrien"), hyphens joined
 *    ("Ming-Hao" -> "minghao"), any other punctuation a space, and courtesy titles (Mr, Mrs, Ms, Miss, Mx, Dr, Prof,
 *    Sir, Dame, Rev) and suffixes (Jr, Sr) removed.
 * 2. Full match, score 100: the normalised names are the same letters in the same order, ignoring spaces
 *    ("Lee Ming Hao" = "Lee Ming-Hao", "MR. JOHN DOE" = "John Doe").
 * 3. Otherwise token alignment: every pair of tokens (one from each name) gets a similarity: 1 - OSA edit distance
 *    (transpositions count once) / longer length, floored to 0 below 0.5 so unrelated words earn nothing; an initial
 *    against a word it starts ("J" / "John") gets 0.5. Pairs are taken greedily, best first, each token used once.
 *    The score is the Dice coefficient, 100 x 2 x (sum of taken similarities) / (tokens in both names), rounded and
 *    capped at 95 because only step 2 is a full match.
 *
 * Verified means score >= VERIFIED_THRESHOLD (80). What that lets through and what it stops, by example:
 * "Jon Doe" or "Jonh Doe" for John Doe 88, "John A Doe" 80, "Doe John" 95: verified. "J Doe" 75, "John" 67,
 * "Jane Doe" 50, "John Smith" 50: not verified. Payouts depend on this, so near misses fail closed.
 */
export const VERIFIED_THRESHOLD = 80;

const TITLES = new Set(['mr', 'mrs', 'ms', 'miss', 'mx', 'dr', 'prof', 'sir', 'dame', 'rev', 'jr', 'sr']);
const UNDECOMPOSED: Record<string, string> = { ø: 'o', æ: 'ae', œ: 'oe', ß: 'ss', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i', ħ: 'h' };

/** The README's rule for a name the verification accepts: at least one letter, in any script ("123" has none). */
export function hasLetter(name: string): boolean {
  return /\p{L}/u.test(name);
}

export function normaliseName(name: string): string[] {
  const letters = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[øæœßłđðþıħ]/g, (char) => UNDECOMPOSED[char] ?? char)
    .replace(/['\u2018\u2019`]/g, '')
    .replace(/[-\u2010\u2011\u2012\u2013]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ');
  const tokens = letters.split(' ').filter((token) => token !== '');
  const withoutTitles = tokens.filter((token) => !TITLES.has(token));
  // A name made only of titles ("Dr Mr") is still compared, rather than matching everything as empty.
  return withoutTitles.length > 0 ? withoutTitles : tokens;
}

/** 0..100; 100 only for a full match. */
export function matchScore(submitted: string, holder: string): number {
  const a = normaliseName(submitted);
  const b = normaliseName(holder);
  if (a.length === 0 || b.length === 0) return 0;
  if (a.join('') === b.join('')) return 100;
  const pairs: { i: number; j: number; similarity: number }[] = [];
  a.forEach((left, i) => b.forEach((right, j) => pairs.push({ i, j, similarity: tokenSimilarity(left, right) })));
  pairs.sort((x, y) => y.similarity - x.similarity || x.i - y.i || x.j - y.j);
  const usedA = new Set<number>();
  const usedB = new Set<number>();
  let total = 0;
  for (const { i, j, similarity } of pairs) {
    if (similarity === 0 || usedA.has(i) || usedB.has(j)) continue;
    usedA.add(i);
    usedB.add(j);
    total += similarity;
  }
  return Math.min(95, Math.round((100 * 2 * total) / (a.length + b.length)));
}

export function isVerified(score: number): boolean {
  return score >= VERIFIED_THRESHOLD;
}

function tokenSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  if ((a.length === 1 && b.startsWith(a)) || (b.length === 1 && a.startsWith(b))) return 0.5;
  const similarity = 1 - osaDistance(a, b) / Math.max(a.length, b.length);
  return similarity >= 0.5 ? similarity : 0;
}

/** Optimal string alignment distance: Levenshtein plus adjacent transposition ("jonh" -> "john" is 1). */
function osaDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push(Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}
