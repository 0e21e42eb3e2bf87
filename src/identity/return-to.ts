import { BadUserInputError } from '../platform/errors/gateway-errors';

export const MAX_RETURN_TO_LENGTH = 512;

/**
 * Where a browser may be sent after sign-in: a path on this gateway and nothing a browser could read as another
 * origin, or an absolute URL on an app's origin in CORS_ORIGINS. Browsers drop tabs and newlines inside URLs and
 * treat `\` as `/`, so `/%09/evil.example` and `/\evil` are other hosts; control and whitespace characters are
 * refused outright rather than cleaned. Only printable ASCII goes into the Location header at the end of the
 * sign-in: anything else cannot be written there, and must be refused here, before the bank is contacted, not found
 * out after the code was exchanged.
 */
export function checkReturnTo(returnTo: string, appOrigins: ReadonlySet<string> = new Set()): string {
  const absolute = !returnTo.startsWith('/') && appOrigins.size > 0;
  const problem =
    returnTo.length > MAX_RETURN_TO_LENGTH
      ? `at most ${MAX_RETURN_TO_LENGTH} characters`
      : absolute
        ? absoluteProblem(returnTo, appOrigins)
        : !returnTo.startsWith('/') || returnTo[1] === '/' || returnTo[1] === '\\'
          ? 'a path starting with a single "/" (not "//" or "/\\")'
          : /[\s\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(returnTo)
            ? 'a path without control, format or whitespace characters'
            : /[^\x21-\x7e]/.test(returnTo)
              ? 'a path of printable ASCII characters only (percent-encode others, as in /caf%C3%A9)'
              : undefined;
  if (problem) {
    const or = appOrigins.size > 0 ? ', or an absolute URL on an origin in CORS_ORIGINS' : '';
    throw new BadUserInputError(`returnTo must be a same-origin path on this gateway, such as /graphql${or}: ${problem}.`, 'returnTo');
  }
  return absolute ? new URL(returnTo).href : returnTo;
}

/**
 * An absolute returnTo sends the browser, signed in, to an app: only to one on an origin listed in CORS_ORIGINS,
 * written plainly (no user part, nothing a browser would clean up into another address).
 */
function absoluteProblem(returnTo: string, appOrigins: ReadonlySet<string>): string | undefined {
  if (/[^\x21-\x7e]/.test(returnTo)) return 'an absolute URL of printable ASCII characters only, without spaces (percent-encode others)';
  let url: URL;
  try {
    url = new URL(returnTo);
  } catch {
    return 'a path starting with a single "/", or an absolute URL such as http://localhost:5173/signed-in';
  }
  if (url.username !== '' || url.password !== '') return 'an absolute URL without a user name or password';
  // Written as the origin itself then a path, query or fragment: what the browser is sent to is what was checked.
  if (!appOrigins.has(url.origin) || !(returnTo === url.origin || (/^[/?#]/.test(returnTo.slice(url.origin.length)) && returnTo.startsWith(url.origin)))) {
    return 'an absolute URL on an origin listed in CORS_ORIGINS, written as that origin then its path';
  }
  return undefined;
}
