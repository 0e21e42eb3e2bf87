import type { Principal } from './principal';
import type { PrincipalEvent } from './revocation';

/** A principal lookup in progress: revocations heard since it started are kept until it ends. */
export interface PrincipalLookup {
  readonly startedAt: number;
}

/**
 * The revocations this instance heard lately (a session logged out, a user revoked), so that a principal whose
 * lookup straddled one is not trusted: a lookup that read the store before the revocation was written answers with
 * a principal that no longer exists, and whoever asked would act for it after the revocation was announced. Each
 * revocation is kept while any lookup that started before it was heard is still running, and at least `retainMs`,
 * so the memory covers the slowest lookup whatever the store's latency.
 */
export class RecentRevocations {
  /** Session key or user id → when heard (performance.now()); in the order heard, so pruning stops at the first kept. */
  private readonly sessions = new Map<string, number>();
  private readonly users = new Map<string, number>();
  /** In the order they started: the first is the oldest. */
  private readonly lookups = new Set<PrincipalLookup>();

  constructor(
    private readonly retainMs = 60_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  heard(event: PrincipalEvent): void {
    const at = this.now();
    if (event.kind === 'logout' && event.sessionKey !== undefined) remember(this.sessions, event.sessionKey, at);
    else if (event.kind === 'user-revoked') remember(this.users, event.userId, at);
    this.prune();
  }

  begin(): PrincipalLookup {
    const lookup = { startedAt: this.now() };
    this.lookups.add(lookup);
    return lookup;
  }

  end(lookup: PrincipalLookup): void {
    this.lookups.delete(lookup);
    this.prune();
  }

  /** Whether this session or user was revoked at or after the lookup started. */
  revokedSince(principal: { userId: string; sessionKey?: string }, lookup: PrincipalLookup): boolean {
    const session = principal.sessionKey === undefined ? undefined : this.sessions.get(principal.sessionKey);
    const user = this.users.get(principal.userId);
    return (session !== undefined && session >= lookup.startedAt) || (user !== undefined && user >= lookup.startedAt);
  }

  /** The principal, or an invalid one when it was revoked since the lookup started (e.g. while a request body was read). */
  stillTrusted(principal: Principal, lookup: PrincipalLookup): Principal {
    if (principal.kind !== 'user' || !this.revokedSince(principal, lookup)) return principal;
    return { kind: 'invalid', reason: 'This session or user was revoked while the request was read; sign in again.', revoked: true };
  }

  /** Revocations held (tests check that the memory does not grow without bound). */
  get size(): number {
    return this.sessions.size + this.users.size;
  }

  private prune(): void {
    if (this.sessions.size === 0 && this.users.size === 0) return;
    let keepFrom = this.now() - this.retainMs;
    for (const oldest of this.lookups) {
      keepFrom = Math.min(keepFrom, oldest.startedAt);
      break;
    }
    for (const heard of [this.sessions, this.users]) {
      for (const [key, at] of heard) {
        if (at >= keepFrom) break;
        heard.delete(key);
      }
    }
  }
}

function remember(heard: Map<string, number>, key: string, at: number): void {
  // Deleted first so the map stays in the order heard.
  heard.delete(key);
  heard.set(key, at);
}
