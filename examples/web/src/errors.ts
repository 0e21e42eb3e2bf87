import { CombinedGraphQLErrors } from '@apollo/client';

/** The gateway's error code (extensions.code) when the gateway answered; undefined when the request never got an answer. */
export function errorCode(error: unknown): string | undefined {
  if (!CombinedGraphQLErrors.is(error)) return undefined;
  const code = error.errors[0]?.extensions?.code;
  return typeof code === 'string' ? code : undefined;
}

/** What a person is shown: the gateway's own message, or the browser's when the request failed (CORS, network). */
export function describeError(error: unknown): string {
  if (CombinedGraphQLErrors.is(error)) return error.errors.map((entry) => entry.message).join(' ');
  if (error instanceof Error) return `The gateway could not be reached: ${error.message}`;
  return String(error);
}
