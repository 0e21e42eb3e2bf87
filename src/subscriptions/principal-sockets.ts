import type { Principal } from '../auth/principal';
import type { IdentityEvent } from '../identity/identity-events';

/** graphql-ws's code for "Unauthorized": the client must not reconnect with the same credentials. */
export const UNAUTHORIZED_CLOSE_CODE = 4401;

interface ClosableSocket {
  close(code: number, reason: string): void;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * The open WebSockets of each signed-in user, so a revocation (logout, disconnectBank, a revoked user) heard on the
 * event bus closes them: closing the socket ends every subscription on it, where ending them one by one could miss
 * one that is just starting.
 */
export class PrincipalSockets {
  private readonly byUser = new Map<string, Map<ClosableSocket, string | undefined>>();

  add(principal: Principal, socket: ClosableSocket): void {
    if (principal.kind !== 'user') return;
    let sockets = this.byUser.get(principal.userId);
    if (!sockets) this.byUser.set(principal.userId, (sockets = new Map()));
    if (sockets.has(socket)) return;
    sockets.set(socket, principal.sessionKey);
    socket.once('close', () => {
      sockets.delete(socket);
      if (sockets.size === 0 && this.byUser.get(principal.userId) === sockets) this.byUser.delete(principal.userId);
    });
  }

  /** A logout closes that session's sockets; a disconnected bank or a revoked user closes all of the user's. */
  close(event: Exclude<IdentityEvent, { kind: 'connected' }>): number {
    let closed = 0;
    for (const [socket, sessionKey] of this.byUser.get(event.userId) ?? []) {
      if (event.kind === 'logout' && sessionKey !== event.sessionKey) continue;
      socket.close(UNAUTHORIZED_CLOSE_CODE, 'Unauthorized');
      closed += 1;
    }
    return closed;
  }
}
