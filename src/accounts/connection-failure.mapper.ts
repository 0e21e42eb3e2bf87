import { GraphQLError } from 'graphql';
import { GatewayError } from '../platform/errors/gateway-errors';
import { INTERNAL_ERROR_MESSAGE } from '../platform/graphql/error-masking';
import { logErrorDetail } from '../platform/graphql/operation-observer.plugin';
import type { OperationContext } from '../platform/graphql/operation-context';
import type { ConnectionFailure } from './every-connection';

/**
 * Each failed bank connection becomes an error at `path` (the field that read every connection), sent with the
 * answer; the field still answers with what the other connections gave.
 */
export function reportConnectionFailures(context: OperationContext, path: readonly (string | number)[], failures: readonly ConnectionFailure[]): void {
  for (const failure of failures) {
    const { error } = failure;
    // Logged here: the error the client gets is a new one, so the operation's own error logging never sees this.
    logErrorDetail(
      context.logger,
      error instanceof GraphQLError ? error : new GraphQLError(String(error), { originalError: error as Error, path }),
      context.requestId,
    );
    context.reportPartialFailure({ path, error: connectionError(failure) });
  }
}

/** The error a failing connection leaves at a path: the original's code and message, and which connection it was. */
function connectionError({ connection, error }: ConnectionFailure): GraphQLError {
  const known = error instanceof GatewayError ? error : undefined;
  return new GraphQLError(`Bank connection ${connection.id} (${connection.providerId}): ${known?.message ?? INTERNAL_ERROR_MESSAGE}`, {
    extensions: { ...(known?.extensions ?? { code: 'INTERNAL_SERVER_ERROR' }), connectionId: connection.id },
  });
}
