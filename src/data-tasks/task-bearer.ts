import type { ConnectionStore, UserTokenProvider } from '../identity';
import type { BearerAuth } from '../platform/provider/http.client';

/**
 * The bank token background work fetches a data task's results with when its webhook never came: that of the bank
 * connection the task was started through, while the connection is active (refreshed as a request's would be).
 * The one place the data-task code obtains a user's token outside a request.
 */
export async function taskBearer(
  connections: ConnectionStore,
  userTokens: UserTokenProvider,
  connectionId: string | undefined,
): Promise<BearerAuth | undefined> {
  if (connectionId === undefined) return undefined;
  if (!(await connections.tokens(connectionId))) return undefined;
  return userTokens.bearerFor(connectionId);
}
