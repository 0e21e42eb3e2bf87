import type { Principal } from '../auth/principal';
import type { IdentityEvent } from '../identity/identity-events';

/** graphql-ws's code for "Unauthorized": the client must not reconnect with the same credentials. */
export const UNAUTHORIZED_CLOSE_CODE = 4401;

/** setTimeout's longest delay; a credential valid for longer is re-checked when that timer fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

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
  private readonly expiryTimers = new WeakMap<ClosableSocket, NodeJS.Timeout>();

  add(principal: Principal, socket: ClosableSocket): void {
    if (principal.kind !== 'user') return;
    let sockets = this.byUser.get(principal.userId);
    if (!sockets) this.byUser.set(principal.userId, (sockets = new Map()));
    if (sockets.has(socket)) return;
    sockets.set(socket, principal.sessionKey);
    if (principal.expiresAtMs !== undefined) this.closeAtExpiry(socket, principal.expiresAtMs);
    socket.once('close', () => {
      clearTimeout(this.expiryTimers.get(socket));
      sockets.delete(socket);
      if (sockets.size === 0 && this.byUser.get(principal.userId) === sockets) this.byUser.delete(principal.userId);
    });
  }

  /**
   * A socket authenticated once, at connection_init, by a credential that expires (an app access token) would
   * otherwise outlive it: the socket is closed when the credential expires, and the client reconnects with a new one.
   */
  private closeAtExpiry(socket: ClosableSocket, expiresAtMs: number): void {
    const timer = setTimeout(
      () => {
        if (Date.now() < expiresAtMs) this.closeAtExpiry(socket, expiresAtMs);
        else socket.close(UNAUTHORIZED_CLOSE_CODE, 'Unauthorized: the access token has expired');
      },
      Math.min(Math.max(expiresAtMs - Date.now(), 0), MAX_TIMER_MS),
    );
    timer.unref();
    this.expiryTimers.set(socket, timer);
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
