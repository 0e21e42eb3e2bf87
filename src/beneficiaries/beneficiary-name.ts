import { BadUserInputError } from '../platform/errors/gateway-errors';
import { characterCount, hasControlCharacters, shown } from '../platform/validation/text-rules';

/** The provider's limit on a name to verify; also applied to a payout's beneficiary name. */
export const MAX_HOLDER_NAME_CHARACTERS = 140;

/** Undefined when `name` is acceptable as an account holder name; otherwise what is wrong with it. */
export function holderNameProblem(name: string): string | undefined {
  const trimmed = name.trim();
  if (trimmed === '') return `must be the account holder's name, a non-empty string; got ${shown(name)}`;
  if (characterCount(trimmed) > MAX_HOLDER_NAME_CHARACTERS) {
    return `must be at most ${MAX_HOLDER_NAME_CHARACTERS} characters; got ${characterCount(trimmed)}`;
  }
  if (hasControlCharacters(trimmed)) return 'must not contain control characters (tabs, line breaks)';
  return undefined;
}

/** verifyAccountHolder(name): the trimmed name, or BAD_USER_INPUT naming `name`. */
export function validateHolderName(name: string, field = 'name'): string {
  const problem = holderNameProblem(name);
  if (problem) throw new BadUserInputError(`${field} ${problem}.`, field);
  return name.trim();
}

/**
 * Whether two spellings name the same holder: case, Unicode composition and runs of spaces do not matter; letters,
 * accents and punctuation do (the bank already did the fuzzy matching when it verified the name).
 */
export function sameHolderName(a: string, b: string): boolean {
  return comparable(a) === comparable(b);
}

function comparable(name: string): string {
  return name.normalize('NFC').trim().replace(/\s+/g, ' ').toLocaleLowerCase('en');
}
