import type { Principal } from '../access/principal';
import type { PrincipalLookup, RecentRevocations } from '../access/recent-revocations';
import type { PrincipalCheck, Revocation } from '../access/revocation';
import type { Logger } from '../observability/logger';

/** graphql-ws's code for "Unauthorized": the client must not reconnect with the same credentials. */
export const UNAUTHORIZED_CLOSE_CODE = 4401;

/** WebSocket's "Policy Violation", for a socket past a cap: graphql-ws clients do not retry it. */
export const POLICY_VIOLATION_CLOSE_CODE = 1008;

/** setTimeout's longest delay; a credential valid for longer is re-checked when that timer fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const REVOKED_WHILE_SIGNING_IN = 'Unauthorized: the session or user was revoked while the socket signed in';

/** ws's readyState once close() was called: the socket is going and takes no new registration. */
const CLOSING = 2;

interface ClosableSocket {
  readonly readyState: number;
  close(code: number, reason: string): void;
  once(event: 'close', listener: () => void): unknown;
}

/** One socket as the registry knows it: under its session from before its principal is trusted, under its user after. */
interface SocketEntry {
  readonly socket: ClosableSocket;
  sessionKey?: string;
  userId?: string;
  capKey?: string;
  expiryTimer?: NodeJS.Timeout;
  closed: boolean;
  /** Why the registry closed it (revoked, expired, past a cap): every later operation on it is refused with this. */
  endedBecause?: string;
  endedWith?: number;
}

export interface PrincipalSocketsOptions {
  /** Sockets one principal may have open on this instance (WS_MAX_SOCKETS_PER_PRINCIPAL). */
  maxSocketsPerPrincipal: number;
  /** How often every socket's principal is checked again (WS_PRINCIPAL_RECHECK_MS); 0 never. */
  recheckMs: number;
  check?: PrincipalCheck;
  /** Revocations heard while a socket's principal was looked up close it once registered. */
  revocations?: RecentRevocations;
  logger?: Logger;
}

/**
 * The open WebSockets of each principal, so a revocation (logout, disconnectBank, a revoked user) heard on the event
 * bus closes them: closing the socket ends every subscription on it, where ending them one by one could miss one
 * that is just starting. A socket signing in with a session token is registered under that session before the
 * session is looked up (`claim`), so a logout during the lookup closes it; under its user once the lookup answers
 * (`add`). Every socket's principal is also checked again in the store every `recheckMs`: an expired, idle,
 * logged-out or revoked one closes the socket even if the event that said so was missed.
 */
export class PrincipalSockets {
  private readonly bySession = new Map<string, Set<SocketEntry>>();
  private readonly byUser = new Map<string, Set<SocketEntry>>();
  private readonly byCapKey = new Map<string, Set<SocketEntry>>();
  private readonly entries = new WeakMap<ClosableSocket, SocketEntry>();
  private recheckTimer: NodeJS.Timeout | undefined;
  private rechecking = false;

  constructor(private readonly options: PrincipalSocketsOptions = { maxSocketsPerPrincipal: Number.POSITIVE_INFINITY, recheckMs: 0 }) {
    if (options.recheckMs > 0 && options.check) {
      this.recheckTimer = setInterval(() => void this.recheck(), options.recheckMs);
      this.recheckTimer.unref();
    }
  }

  /** Before the socket's credentials are looked up: a logout of `sessionKey` from now on closes it. */
  claim(socket: ClosableSocket, sessionKey: string | undefined): void {
    const entry = this.entryOf(socket);
    if (entry.closed || sessionKey === undefined || entry.sessionKey !== undefined) return;
    entry.sessionKey = sessionKey;
    addTo(this.bySession, sessionKey, entry);
  }

  /**
   * Once the principal is known: the socket joins its user's sockets and its principal's count, then the principal
   * is checked against the revocations heard since `lookup` began (registered first, so a revocation is either
   * heard before the check or finds the socket registered). Answers why the socket was refused (revoked, or past
   * the cap; it is then closed), or undefined.
   */
  add(principal: Principal, socket: ClosableSocket, capKey?: string, lookup?: PrincipalLookup): string | undefined {
    const entry = this.entryOf(socket);
    if (entry.closed) return entry.endedBecause ?? 'The WebSocket is closed.';
    if (principal.kind === 'invalid' && principal.revoked) return this.end(entry, UNAUTHORIZED_CLOSE_CODE, REVOKED_WHILE_SIGNING_IN);
    // A token that named no live session: the socket stays open for what needs no sign-in, and nothing to revoke.
    if (entry.sessionKey !== undefined && (principal.kind !== 'user' || principal.sessionKey !== entry.sessionKey)) {
      removeFrom(this.bySession, entry.sessionKey, entry);
      entry.sessionKey = undefined;
    }
    if (capKey !== undefined && entry.capKey === undefined) {
      const held = this.byCapKey.get(capKey)?.size ?? 0;
      if (held >= this.options.maxSocketsPerPrincipal) {
        return this.end(
          entry,
          POLICY_VIOLATION_CLOSE_CODE,
          `Too many WebSockets: at most ${this.options.maxSocketsPerPrincipal} per principal on this instance (WS_MAX_SOCKETS_PER_PRINCIPAL)`,
        );
      }
      entry.capKey = capKey;
      addTo(this.byCapKey, capKey, entry);
    }
    if (principal.kind !== 'user' || entry.userId !== undefined) return undefined;
    entry.userId = principal.userId;
    addTo(this.byUser, principal.userId, entry);
    if (principal.sessionKey !== undefined && entry.sessionKey === undefined) {
      entry.sessionKey = principal.sessionKey;
      addTo(this.bySession, principal.sessionKey, entry);
    }
    if (lookup && this.options.revocations?.revokedSince(principal, lookup)) {
      return this.end(entry, UNAUTHORIZED_CLOSE_CODE, REVOKED_WHILE_SIGNING_IN);
    }
    if (principal.expiresAtMs !== undefined) {
      this.closeAtExpiry(entry, principal.expiresAtMs, principal.sessionKey ? 'the session has expired' : 'the access token has expired');
    }
    return undefined;
  }

  /** Why (and with which close code) the registry closed this socket, if it did: operations still arriving on it are refused. */
  endedBecause(socket: ClosableSocket): { code: number; reason: string } | undefined {
    const entry = this.entries.get(socket);
    return entry?.endedBecause === undefined ? undefined : { code: entry.endedWith!, reason: entry.endedBecause };
  }

  /** A logout closes that session's sockets; a disconnected bank or a revoked user closes all of the user's. */
  close(event: Revocation): number {
    const entries = event.kind === 'logout' ? this.bySession.get(event.sessionKey) : this.byUser.get(event.userId);
    const reason =
      event.kind === 'logout'
        ? 'Unauthorized: the session was logged out'
        : event.kind === 'user-revoked'
          ? 'Unauthorized: the user was revoked'
          : 'Unauthorized: a bank connection was revoked; subscribe again';
    let closed = 0;
    for (const entry of [...(entries ?? [])]) {
      if (entry.endedBecause !== undefined) continue;
      this.end(entry, UNAUTHORIZED_CLOSE_CODE, reason);
      closed += 1;
    }
    return closed;
  }

  /** Checks every signed-in socket's principal in the store and closes those whose principal no longer holds. */
  async recheck(): Promise<number> {
    const check = this.options.check;
    if (!check || this.rechecking) return 0;
    this.rechecking = true;
    try {
      const sessionKeys = [...this.bySession.keys()];
      const userIds = [...this.byUser].filter(([, entries]) => [...entries].some((entry) => entry.sessionKey === undefined)).map(([userId]) => userId);
      if (sessionKeys.length === 0 && userIds.length === 0) return 0;
      const { liveSessions, revokedUsers } = await check({ sessionKeys, userIds });
      let closed = 0;
      for (const key of sessionKeys) {
        if (liveSessions.has(key)) continue;
        for (const entry of [...(this.bySession.get(key) ?? [])]) {
          if (entry.endedBecause !== undefined) continue;
          this.end(entry, UNAUTHORIZED_CLOSE_CODE, 'Unauthorized: the session has ended (expired, idle, logged out or revoked)');
          closed += 1;
        }
      }
      for (const userId of revokedUsers) {
        for (const entry of [...(this.byUser.get(userId) ?? [])]) {
          if (entry.endedBecause !== undefined) continue;
          this.end(entry, UNAUTHORIZED_CLOSE_CODE, 'Unauthorized: the user was revoked');
          closed += 1;
        }
      }
      return closed;
    } catch (error) {
      // A store outage keeps the sockets open: the next recheck, or a revocation event, closes what must close.
      this.options.logger?.warn({ err: error }, 'could not check the principals of open WebSockets');
      return 0;
    } finally {
      this.rechecking = false;
    }
  }

  /** Sockets registered (tests check that closed ones leave). */
  get size(): number {
    const all = new Set<SocketEntry>();
    for (const map of [this.bySession, this.byUser, this.byCapKey]) for (const entries of map.values()) for (const entry of entries) all.add(entry);
    return all.size;
  }

  stop(): void {
    clearInterval(this.recheckTimer);
    this.recheckTimer = undefined;
  }

  private entryOf(socket: ClosableSocket): SocketEntry {
    let entry = this.entries.get(socket);
    if (entry) return entry;
    entry = { socket, closed: socket.readyState >= CLOSING };
    this.entries.set(socket, entry);
    if (!entry.closed) {
      const registered = entry;
      socket.once('close', () => this.forget(registered));
    }
    return entry;
  }

  private end(entry: SocketEntry, code: number, reason: string): string {
    entry.endedBecause = reason;
    entry.endedWith = code;
    entry.socket.close(code, reason);
    // Out of the registry now: the socket is going, and its close event may come late (a peer that never answers).
    this.forget(entry);
    return reason;
  }

  private forget(entry: SocketEntry): void {
    entry.closed = true;
    clearTimeout(entry.expiryTimer);
    if (entry.sessionKey !== undefined) removeFrom(this.bySession, entry.sessionKey, entry);
    if (entry.userId !== undefined) removeFrom(this.byUser, entry.userId, entry);
    if (entry.capKey !== undefined) removeFrom(this.byCapKey, entry.capKey, entry);
  }

  /**
   * A socket authenticated once, on its first operation, by a credential that expires (an app access token, a
   * session's lifetime) would otherwise outlive it: the socket is closed when the credential expires, and the
   * client reconnects with a new one.
   */
  private closeAtExpiry(entry: SocketEntry, expiresAtMs: number, what: string): void {
    const timer = setTimeout(
      () => {
        if (entry.closed) return;
        if (Date.now() < expiresAtMs) this.closeAtExpiry(entry, expiresAtMs, what);
        else this.end(entry, UNAUTHORIZED_CLOSE_CODE, `Unauthorized: ${what}`);
      },
      Math.min(Math.max(expiresAtMs - Date.now(), 0), MAX_TIMER_MS),
    );
    timer.unref();
    entry.expiryTimer = timer;
  }
}

function addTo(map: Map<string, Set<SocketEntry>>, key: string, entry: SocketEntry): void {
  let entries = map.get(key);
  if (!entries) map.set(key, (entries = new Set()));
  entries.add(entry);
}

function removeFrom(map: Map<string, Set<SocketEntry>>, key: string, entry: SocketEntry): void {
  const entries = map.get(key);
  if (!entries?.delete(entry)) return;
  if (entries.size === 0) map.delete(key);
}
