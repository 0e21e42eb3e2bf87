import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { formatPartialFailure, type OperationContext } from './operation-context';

/**
 * A domain error (src/platform/errors), or anything else refused before execution, as a GraphQL error: graphql-js
 * gives it the domain error's `extensions` and keeps it as `originalError`, which is how the masker recognises the
 * gateway's own errors, exactly as for one a resolver threw.
 */
export function toGraphQLError(error: unknown): GraphQLError {
  if (error instanceof GraphQLError) return error;
  return new GraphQLError(error instanceof Error ? error.message : String(error), { originalError: error instanceof Error ? error : undefined });
}

/**
 * The errors of the operation's bank connections that failed while the others answered (context.reportPartialFailure),
 * taken once: a subscription reports each with the event it happened in.
 */
export function takePartialFailures(context: OperationContext | undefined): GraphQLFormattedError[] {
  if (!context || context.partialFailures.length === 0) return [];
  return context.partialFailures.splice(0).map(formatPartialFailure);
}

/** Adds the request id to every error, so a client can quote it and support can find the log lines. */
export function withRequestId(errors: readonly GraphQLFormattedError[], requestId: string | undefined): GraphQLFormattedError[] {
  if (requestId === undefined) return [...errors];
  return errors.map((error) => (error.extensions?.requestId ? error : { ...error, extensions: { ...error.extensions, requestId } }));
}

/**
 * The request id on the errors of an answer a library wrote before any hook of ours ran (Apollo: a CSRF refusal, a
 * batch, an empty body, `variables` as a string, an unsupported method; graphql-sse: a query that is not a string),
 * and `codeWhenNone` on those without a code. Such answers carry no `data`, so tagging them cannot touch a result
 * (and the decimals it keeps as written).
 */
export function withRequestIdOnAnswer(body: string, requestId: string, codeWhenNone?: string): string {
  // An answer with data is left as it is (below); Apollo writes `errors` before `data`, so one that starts with
  // data is known without searching the whole (often large) text for "errors".
  if (body.startsWith('{"data"') || !body.includes('"errors"') || body.includes('"requestId"')) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  if (typeof parsed !== 'object' || parsed === null || 'data' in parsed) return body;
  const { errors } = parsed as { errors?: unknown };
  if (!Array.isArray(errors)) return body;
  const coded = codeWhenNone === undefined ? (errors as GraphQLFormattedError[]) : errors.map((error: GraphQLFormattedError) => withCode(error, codeWhenNone));
  return JSON.stringify({ ...parsed, errors: withRequestId(coded, requestId) });
}

function withCode(error: GraphQLFormattedError, code: string): GraphQLFormattedError {
  return error.extensions?.code === undefined ? { ...error, extensions: { ...error.extensions, code } } : error;
}
