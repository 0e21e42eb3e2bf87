import { NotFoundError } from '../platform/errors/gateway-errors';
import type { BankConnectionRecord, ConnectionStore } from './connection.store';
import type { IdentityEvents } from './identity-events';
import { sessionKey, type SessionStore } from './session.store';

/** What other modules keep for a user or one of their bank connections (a data task's results). */
export interface HeldForUsers {
  forgetUser(userId: string): Promise<unknown>;
  forgetConnection(connectionId: string): Promise<unknown>;
}

export interface IdentityServiceDeps {
  connections: ConnectionStore;
  sessions: SessionStore;
  events: IdentityEvents;
  /** Deleted before a revocation is announced, so the caller's answer comes after it is gone (listeners delete it too). */
  held: HeldForUsers;
}

/**
 * Users, their bank connections and sessions as callers change them. Every revocation is written to the store
 * first, then announced to every instance (src/identity/identity-events.ts), which closes the sockets and forgets
 * what was remembered of it: announced before the write, another instance could read the store again and trust it.
 */
export class IdentityService {
  constructor(private readonly deps: IdentityServiceDeps) {}

  /** The user's connections that are not revoked (active and expired), oldest first. */
  connectionsOf(userId: string): Promise<readonly BankConnectionRecord[]> {
    return this.deps.connections.connectionsOf(userId);
  }

  /** The app closed the user's account: their sessions, bank connections and open subscriptions end. */
  async revokeUser(userId: string): Promise<void> {
    if (!(await this.deps.connections.revokeUser(userId))) throw new NotFoundError('No user with that id exists.');
    await this.deps.held.forgetUser(userId);
    await this.deps.events.publish({ kind: 'user-revoked', userId });
  }

  async reinstateUser(userId: string): Promise<void> {
    if (!(await this.deps.connections.reinstateUser(userId))) throw new NotFoundError('No user with that id exists.');
  }

  /** Revokes one of the user's bank connections; answers it as it is now. */
  async disconnectBank(userId: string, connectionId: string): Promise<BankConnectionRecord> {
    const revoked = await this.deps.connections.revoke(userId, connectionId);
    if (!revoked) throw new NotFoundError('No bank connection with that id belongs to this user.');
    await this.deps.held.forgetConnection(connectionId);
    await this.deps.events.publish({ kind: 'disconnected', userId, connectionId });
    return revoked;
  }

  /** A bank was added to the user: answers kept for them no longer show all they may see. */
  async bankConnected(userId: string, connectionId: string): Promise<void> {
    await this.deps.events.publish({ kind: 'connected', userId, connectionId });
  }

  /** Ends the session of this token, if it is live; nothing keeps streaming for it on any instance. */
  async logout(sessionToken: string): Promise<void> {
    const ended = await this.deps.sessions.delete(sessionToken);
    if (ended) await this.deps.events.publish({ kind: 'logout', userId: ended.userId, sessionKey: sessionKey(sessionToken) });
  }
}
