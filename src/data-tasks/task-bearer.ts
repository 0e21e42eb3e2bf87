import type { BearerAuth } from '../datasources/http.client';
import type { SessionStore } from '../store/session.store';

/**
 * The bank token background work fetches a data task's results with when its webhook never came: the current
 * access token of the session that started the task, while that session lasts and the token is valid. The one
 * place the data-task code obtains a user's token outside a request, so a change in how sessions keep tokens
 * changes only this function.
 */
export async function taskBearer(sessions: SessionStore, sessionKey: string | undefined, now: number = Date.now()): Promise<BearerAuth | undefined> {
  if (sessionKey === undefined) return undefined;
  const session = await sessions.getByKey(sessionKey);
  if (!session || session.tokens.expiresAtMs <= now) return undefined;
  const { accessToken } = session.tokens;
  return { token: async () => accessToken };
}
