import { GraphQLError, responsePathAsArray, type GraphQLResolveInfo } from 'graphql';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { GatewayError } from '../platform/errors/gateway-errors';
import type { BankConnectionRecord } from '../identity';
import { logErrorDetail } from '../platform/graphql/operation-observer.plugin';
import { INTERNAL_ERROR_MESSAGE } from '../platform/graphql/error-masking';

/**
 * `load` for each of the user's active connections, all at once (so two banks cost no more round trips than one).
 * A bank that fails costs only its own part: the rest is answered, with an error at this field's path naming the
 * connection, instead of the whole query failing because one consent expired.
 */
export async function fromEveryConnection<T>(
  context: GatewayContext,
  info: GraphQLResolveInfo,
  load: (connection: BankConnectionRecord) => Promise<T[]>,
): Promise<T[]> {
  const active = (await context.connections()).filter((connection) => connection.status === 'active');
  const parts = await Promise.all(
    active.map((connection) =>
      load(connection).catch((error: unknown) => {
        const path = responsePathAsArray(info.path);
        // Logged here: the error the client gets is a new one, so the operation's own error logging never sees this.
        logErrorDetail(
          context.logger,
          error instanceof GraphQLError ? error : new GraphQLError(String(error), { originalError: error as Error, path }),
          context.requestId,
        );
        context.reportPartialFailure({ path, error: connectionError(connection, error) });
        return [] as T[];
      }),
    ),
  );
  return parts.flat();
}

/** The error a failing connection leaves at a path: the original's code and message, and which connection it was. */
export function connectionError(connection: BankConnectionRecord, error: unknown): GraphQLError {
  const known = error instanceof GatewayError ? error : undefined;
  return new GraphQLError(`Bank connection ${connection.id} (${connection.providerId}): ${known?.message ?? INTERNAL_ERROR_MESSAGE}`, {
    extensions: { ...(known?.extensions ?? { code: 'INTERNAL_SERVER_ERROR' }), connectionId: connection.id },
  });
}
