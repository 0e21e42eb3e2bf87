import type { Logger } from '../platform/observability/logger';
import type { PrincipalSockets } from '../platform/live/principal-sockets';
import { forgetDataTasksOnRevocation } from '../data-tasks';
import type { Services } from './services';

/**
 * A logout, a bank (dis)connected or a revoked user anywhere: this instance remembers the revocation (a principal
 * whose lookup straddled it is not trusted), forgets what it remembered of them, drops the answers it kept for
 * them, and closes their WebSockets (4401) and HTTP subscription streams (SSE, multipart), which ends their subscriptions. Resolves to what stops listening.
 */
export async function listenForRevocations(
  services: Services,
  answers: { forgetUser(userId: string): void },
  sockets: PrincipalSockets,
  logger: Logger,
): Promise<() => Promise<void>> {
  const stopIdentityEvents = await services.identityEvents.listen((event) => {
    services.revocations.heard(event);
    answers.forgetUser(event.userId);
    services.connections.forgetConnections(event.userId);
    if (event.kind === 'connected') return;
    services.sessions.forget(event.kind === 'logout' ? { sessionKey: event.sessionKey } : { userId: event.userId });
    if (event.kind === 'disconnected') services.userTokens.forget(event.connectionId);
    const closed = sockets.close(event);
    if (closed > 0) logger.info({ principal: event.userId, closed, reason: event.kind }, 'closed the WebSockets and streams of a revoked principal');
  });
  const stopDataTaskRevocations = await forgetDataTasksOnRevocation(services.identityEvents, services.live.dataTasks, logger);
  return async () => {
    await stopIdentityEvents();
    await stopDataTaskRevocations();
  };
}
