import type { IncomingMessage, ServerResponse } from 'node:http';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { ErrorCode } from '../errors/gateway-errors';

/**
 * The gateway's own rate limit has no code of its own in the fixed list (docs/api.md), and UPSTREAM_RATE_LIMITED means the
 * provider is limiting the gateway. It is FORBIDDEN ("you may not do this right now") with `reason: RATE_LIMITED`
 * and `retryAfterSeconds`; over HTTP the status is 429 with Retry-After, which generic HTTP clients already honour.
 */
export const RATE_LIMITED_REASON = 'RATE_LIMITED';

export function rateLimitedError(retryAfterSeconds: number): GraphQLError {
  return new GraphQLError(`Too many requests from this client; retry after ${retryAfterSeconds} s.`, {
    extensions: { code: 'FORBIDDEN' satisfies ErrorCode, reason: RATE_LIMITED_REASON, retryAfterSeconds },
  });
}

/**
 * A GraphQL-shaped answer for a request refused before Apollo saw it (rate limit, body too large, unreadable
 * JSON), so a GraphQL client finds `errors[0].extensions.code` where it always looks.
 */
export function sendGraphQLRefusal(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  error: GraphQLFormattedError,
  requestId: string,
  headers: Record<string, string> = {},
): void {
  const body = Buffer.from(JSON.stringify({ errors: [{ ...error, extensions: { ...error.extensions, requestId } }] }));
  const wantsGraphQLResponse = /application\/graphql-response\+json/i.test(req.headers.accept ?? '');
  res.writeHead(status, {
    'content-type': `${wantsGraphQLResponse ? 'application/graphql-response+json' : 'application/json'}; charset=utf-8`,
    'content-length': body.length,
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(body);
}

/** GraphQLError → the JSON a client gets, without the `http` hint that only steers the status code. */
export function formattedRefusal(error: GraphQLError): GraphQLFormattedError {
  const { http: _http, ...extensions } = error.extensions as Record<string, unknown>;
  return { message: error.message, extensions };
}
