import { InputProblems } from '../platform/validation/input-problems';
import { characterCount, hasControlCharacters, shown } from '../platform/validation/text-rules';

export const MAX_DECLINE_REASON_CHARACTERS = 200;

/** declinePayout's reason, trimmed; BAD_USER_INPUT naming `reason` when it is empty, too long or has control characters. */
export function validateDeclineReason(reason: string): string {
  const trimmed = reason.trim();
  if (trimmed === '' || characterCount(trimmed) > MAX_DECLINE_REASON_CHARACTERS || hasControlCharacters(trimmed)) {
    const problems = new InputProblems();
    problems.add('reason', `must be 1 to ${MAX_DECLINE_REASON_CHARACTERS} characters of text without control characters; got ${shown(reason)}`);
    problems.throwIfAny();
  }
  return trimmed;
}
