import type { Logger } from '../platform/observability/logger';
import type { PrincipalSockets } from '../platform/live/principal-sockets';
import { forgetDataTasksOnRevocation } from '../data-tasks';
import type { Identity } from '../identity';
import type { DataTaskService } from '../data-tasks';

/**
 * A logout, a bank (dis)connected or a revoked user anywhere: this instance remembers the revocation (a principal
 * whose lookup straddled it is not trusted), forgets what it remembered of them, drops the answers it kept for
 * them, and closes their WebSockets (4401) and HTTP subscription streams (SSE, multipart), which ends their subscriptions. Resolves to what stops listening.
 */
export interface RevocationDeps {
  identity: Pick<Identity, 'identityEvents' | 'revocations' | 'connections' | 'sessions' | 'userTokens'>;
  dataTasks: DataTaskService;
  /** The answers kept for users (the HTTP answer cache). */
  answers: { forgetUser(userId: string): void };
  sockets: PrincipalSockets;
  logger: Logger;
}

export async function listenForRevocations(deps: RevocationDeps): Promise<() => Promise<void>> {
  const { identity, answers, sockets, logger } = deps;
  const stopIdentityEvents = await identity.identityEvents.listen((event) => {
    identity.revocations.heard(event);
    answers.forgetUser(event.userId);
    identity.connections.forgetConnections(event.userId);
    if (event.kind === 'connected') return;
    identity.sessions.forget(event.kind === 'logout' ? { sessionKey: event.sessionKey } : { userId: event.userId });
    if (event.kind === 'disconnected') identity.userTokens.forget(event.connectionId);
    const closed = sockets.close(event);
    if (closed > 0) logger.info({ principal: event.userId, closed, reason: event.kind }, 'closed the WebSockets and streams of a revoked principal');
  });
  const stopDataTaskRevocations = await forgetDataTasksOnRevocation(identity.identityEvents, deps.dataTasks, logger);
  return async () => {
    await stopIdentityEvents();
    await stopDataTaskRevocations();
  };
}
