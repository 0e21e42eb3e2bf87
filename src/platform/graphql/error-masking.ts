import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { ERROR_CODES, GatewayError, type ErrorCode } from '../errors/gateway-errors';
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
 * What a client may see of an error, for HTTP (Apollo's formatError) and WebSocket alike, decided by where the error
 * came from, never by the code it carries (Apollo gives any thrown value a code of its own):
 * - the gateway's own errors (GatewayError subclasses) as raised, except InternalServerError, whose message
 *   describes the fault (a scalar quoting the provider value it refused) for the log;
 * - errors about the request itself, raised before anything executed (parse, validation, variables, the gateway's
 *   guards): BAD_USER_INPUT with GraphQL's explanation, or the guard's refusal as it is;
 * - anything else (a TypeError in a resolver, a scalar refusing a provider value, a library's error) as
 *   INTERNAL_SERVER_ERROR with no message, stack or provider text.
 * Logging is the caller's job: it knows the request id.
 */
export function createErrorMasker(options: { production: boolean }): ErrorMasker {
  return function maskError(formatted, error) {
    const known = gatewayErrorOf(error);
    if (known && !isUnexpected(known)) return { ...formatted, message: known.message, extensions: { ...known.extensions } };
    const code = formatted.extensions?.code;
    if (isUnexpected(error, formatted) || typeof code !== 'string') {
      return {
        message: INTERNAL_ERROR_MESSAGE,
        ...(formatted.path ? { path: formatted.path } : {}),
        ...(formatted.locations ? { locations: formatted.locations } : {}),
        extensions: { code: 'INTERNAL_SERVER_ERROR' satisfies ErrorCode },
      };
    }
    if (!REQUEST_ERROR_CODES.has(code)) return formatted;
    const message = options.production ? withoutSuggestions(formatted.message) : formatted.message;
    const { limit, max, field } = formatted.extensions ?? {};
    if (typeof limit === 'string') {
      const argument = typeof field === 'string' ? { field } : {};
      return { ...formatted, message, extensions: { code: 'BAD_USER_INPUT' satisfies ErrorCode, reason: OPERATION_LIMIT_REASON, limit, max, ...argument } };
    }
    if (code === 'GRAPHQL_PARSE_FAILED' && isTokenLimitMessage(message)) {
      return { ...formatted, message, extensions: { code: 'BAD_USER_INPUT' satisfies ErrorCode, reason: OPERATION_LIMIT_REASON, limit: 'maxTokens' } };
    }
    return { ...formatted, message, extensions: { code: 'BAD_USER_INPUT' satisfies ErrorCode, ...(code === 'BAD_USER_INPUT' ? {} : { reason: code }) } };
  };
}

/** The GatewayError behind a GraphQL error, whether it was thrown as is or wrapped by graphql-js at a field. */
export function gatewayErrorOf(error: unknown): GatewayError | undefined {
  const original = (error as { originalError?: unknown } | undefined)?.originalError;
  if (original instanceof GatewayError) return original;
  return error instanceof GatewayError ? error : undefined;
}

/**
 * True when masking hides the error (the log must then carry what the client did not get): an InternalServerError, or not the gateway's own,
 * and either raised while executing (it has a path), or wrapping something that is not a GraphQL error, or carrying
 * no code a request refusal has.
 */
export function isUnexpected(error: unknown, formatted?: GraphQLFormattedError): boolean {
  const known = gatewayErrorOf(error);
  if (known) return known.code === 'INTERNAL_SERVER_ERROR';
  const graphqlError = error as { path?: unknown; originalError?: unknown; extensions?: { code?: unknown } } | undefined;
  if ((formatted?.path ?? graphqlError?.path) !== undefined) return true;
  const original = graphqlError?.originalError;
  if (original !== undefined && original !== null && !(original instanceof GraphQLError)) return true;
  const code = formatted?.extensions?.code ?? graphqlError?.extensions?.code;
  return !(
    typeof code === 'string' &&
    code !== 'INTERNAL_SERVER_ERROR' &&
    (REQUEST_ERROR_CODES.has(code) || (ERROR_CODES as readonly string[]).includes(code))
  );
}
