import type { GraphQLFormattedError } from 'graphql';
import { ERROR_CODES, GatewayError, type ErrorCode } from '../errors';
import { isTokenLimitMessage, OPERATION_LIMIT_REASON, withoutSuggestions } from './operation-limits';

/** Errors GraphQL itself raises for a malformed request are the client's mistake: BAD_USER_INPUT, with the detail. */
export const REQUEST_ERROR_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_SUPPORTED',
]);

export const INTERNAL_ERROR_MESSAGE = 'Internal error; quote the request id when reporting it.';

export type ErrorMasker = (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;

/**
 * What a client may see of an error, for HTTP (Apollo's formatError) and WebSocket alike: the gateway's own errors
 * as raised, request errors as BAD_USER_INPUT with GraphQL's explanation, anything else as INTERNAL_SERVER_ERROR
 * with no message, stack or provider body. Logging is the caller's job: it knows the request id.
 */
export function createErrorMasker(options: { production: boolean }): ErrorMasker {
  return function maskError(formatted, error) {
    const known = gatewayErrorOf(error);
    if (known) return { ...formatted, message: known.message, extensions: { ...known.extensions } };
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && REQUEST_ERROR_CODES.has(code)) {
      const message = options.production ? withoutSuggestions(formatted.message) : formatted.message;
      const { limit, max } = formatted.extensions ?? {};
      if (typeof limit === 'string') {
        return { ...formatted, message, extensions: { code: 'BAD_USER_INPUT' satisfies ErrorCode, reason: OPERATION_LIMIT_REASON, limit, max } };
      }
      if (code === 'GRAPHQL_PARSE_FAILED' && isTokenLimitMessage(message)) {
        return { ...formatted, message, extensions: { code: 'BAD_USER_INPUT' satisfies ErrorCode, reason: OPERATION_LIMIT_REASON, limit: 'maxTokens' } };
      }
      return { ...formatted, message, extensions: { code: 'BAD_USER_INPUT' satisfies ErrorCode, ...(code === 'BAD_USER_INPUT' ? {} : { reason: code }) } };
    }
    if (typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code)) return formatted;
    return {
      message: INTERNAL_ERROR_MESSAGE,
      ...(formatted.path ? { path: formatted.path } : {}),
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      extensions: { code: 'INTERNAL_SERVER_ERROR' satisfies ErrorCode },
    };
  };
}

/** The GatewayError behind a GraphQL error, whether it was thrown as is or wrapped by graphql-js at a field. */
export function gatewayErrorOf(error: unknown): GatewayError | undefined {
  const original = (error as { originalError?: unknown } | undefined)?.originalError;
  if (original instanceof GatewayError) return original;
  return error instanceof GatewayError ? error : undefined;
}

/** True when masking hid the error: the log must then carry what the client did not get. */
export function isUnexpected(error: unknown): boolean {
  if (gatewayErrorOf(error)) return false;
  const code = (error as { extensions?: { code?: unknown } } | undefined)?.extensions?.code;
  return !(typeof code === 'string' && (REQUEST_ERROR_CODES.has(code) || (ERROR_CODES as readonly string[]).includes(code)));
}
