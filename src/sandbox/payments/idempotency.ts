import type { SandboxClock } from '../clock';

/** docs/provider-choices.md: a key is remembered for 24 hours of sandbox time after its request was accepted. */
export const IDEMPOTENCY_KEY_TTL_SECONDS = 24 * 60 * 60;

export type IdempotencyLookup<T> = { kind: 'new' } | { kind: 'replay'; result: T } | { kind: 'reuse' } | { kind: 'in-flight' };

type Entry<T> = { fingerprint: string; state: 'in-flight' } | { fingerprint: string; state: 'done'; result: T; expiresAtMs: number };

/**
 * Idempotency keys for one client. A key is claimed (`begin`) before the work starts, so a second request with it
 * sees "in flight" instead of doing the work twice. Only accepted requests are remembered (`complete`); a request
 * refused on the way (`abandon`) frees its key, so the client can correct and retry it.
 */
export class IdempotencyKeys<T> {
  private readonly entries = new Map<string, Entry<T>>();
  /** Completed keys in completion order, hence in expiry order (sandbox time only moves forward). */
  private readonly expiries: { key: string; expiresAtMs: number }[] = [];

  constructor(
    private readonly clock: SandboxClock,
    private readonly ttlSeconds = IDEMPOTENCY_KEY_TTL_SECONDS,
  ) {}

  /** `fingerprint` identifies the request (method, path, body), so a key reused for another request is caught. */
  lookup(key: string, fingerprint: string): IdempotencyLookup<T> {
    const entry = this.entries.get(key);
    if (!entry) return { kind: 'new' };
    if (entry.state === 'in-flight') return { kind: 'in-flight' };
    if (entry.expiresAtMs <= this.clock.nowMs()) {
      this.entries.delete(key);
      return { kind: 'new' };
    }
    return entry.fingerprint === fingerprint ? { kind: 'replay', result: entry.result } : { kind: 'reuse' };
  }

  begin(key: string, fingerprint: string): void {
    this.entries.set(key, { fingerprint, state: 'in-flight' });
  }

  complete(key: string, fingerprint: string, result: T): void {
    this.prune();
    const expiresAtMs = this.clock.nowMs() + this.ttlSeconds * 1000;
    this.entries.set(key, { fingerprint, state: 'done', result, expiresAtMs });
    this.expiries.push({ key, expiresAtMs });
  }

  abandon(key: string): void {
    const entry = this.entries.get(key);
    if (entry?.state === 'in-flight') this.entries.delete(key);
  }

  /** Drops expired keys, oldest first, so a long-running sandbox does not keep every key it ever saw. */
  private prune(): void {
    const now = this.clock.nowMs();
    let expired = 0;
    while (expired < this.expiries.length && this.expiries[expired]!.expiresAtMs <= now) {
      const { key, expiresAtMs } = this.expiries[expired]!;
      const entry = this.entries.get(key);
      // The key may have been reused after it expired; only the entry this expiry belongs to goes.
      if (entry?.state === 'done' && entry.expiresAtMs === expiresAtMs) this.entries.delete(key);
      expired += 1;
    }
    if (expired > 0) this.expiries.splice(0, expired);
  }
}
