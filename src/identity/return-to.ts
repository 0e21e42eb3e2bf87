import { BadUserInputError } from '../platform/errors/gateway-errors';

export const MAX_RETURN_TO_LENGTH = 512;

/**
 * Where a browser may be sent after sign-in: a path on this gateway and nothing a browser could read as another
 * origin. Browsers drop tabs and newlines inside URLs and treat `\` as `/`, so `/%09/evil.example` and `/\evil`
 * are other hosts; control and whitespace characters are refused outright rather than cleaned. Only printable
 * ASCII goes into the Location header at the end of the sign-in: anything else cannot be written there, and must
 * be refused here, before the bank is contacted, not found out after the code was exchanged.
 */
export function checkReturnTo(returnTo: string): string {
  const problem =
    returnTo.length > MAX_RETURN_TO_LENGTH
      ? `at most ${MAX_RETURN_TO_LENGTH} characters`
      : !returnTo.startsWith('/') || returnTo[1] === '/' || returnTo[1] === '\\'
        ? 'a path starting with a single "/" (not "//" or "/\\")'
        : /[\s\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(returnTo)
          ? 'a path without control, format or whitespace characters'
          : /[^\x21-\x7e]/.test(returnTo)
            ? 'a path of printable ASCII characters only (percent-encode others, as in /caf%C3%A9)'
            : undefined;
  if (problem) throw new BadUserInputError(`returnTo must be a same-origin path on this gateway, such as /graphql: ${problem}.`, 'returnTo');
  return returnTo;
}
