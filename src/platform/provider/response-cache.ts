import type Keyv from 'keyv';
import type { DataRequest, DataResource } from './data.client';

/** Seconds each kind of data may be served from cache; balances move fastest, account lists slowest. */
export const DEFAULT_CACHE_TTL_SECONDS: Record<DataResource, number> = {
  accounts: 60,
  cards: 60,
  accountTransactions: 30,
  cardTransactions: 30,
  accountPendingTransactions: 10,
  cardPendingTransactions: 10,
  accountBalance: 10,
  cardBalance: 10,
};

export type CacheMode = 'use' | 'bypass';

export interface CacheEvents {
  onHit?(resource: DataResource): void;
  onMiss?(resource: DataResource): void;
  /** The cache failed or was too slow to answer (`get` or `set`); the request went on without it. */
  onFailure?(operation: 'get' | 'set'): void;
}

/**
 * How long a cache read or write may take before it counts as failed. A cache that is down (Redis restarting)
 * must cost a request no more than this: the request is answered from the provider as on a miss.
 */
export const CACHE_TIMEOUT_MS = 250;

/**
 * Data-API answers shared across requests, keyed by the bank user and the exact call, never by anything a
 * different user could produce. Within one process, concurrent misses for the same key share one provider call.
 * `bypass` skips the read (the client asked for fresh data) but still stores the fresh answer. A cache outage is a
 * miss, never an error: data comes from the provider, and the failure is counted (`onFailure`).
 */
export class ResponseCache {
  // Not lru-cache's fetch: a `bypass` starts its own load while another is in flight (fetch would join it), and the
  // values live in keyv, which may be shared (Redis); this only joins loads.
  private readonly inFlight = new Map<string, Promise<CacheEntry<unknown>>>();

  constructor(
    private readonly keyv: Keyv<unknown>,
    private readonly ttlSeconds: Record<DataResource, number> = DEFAULT_CACHE_TTL_SECONDS,
    private readonly events: CacheEvents = {},
    private readonly now: () => number = Date.now,
    private readonly timeoutMs: number = CACHE_TIMEOUT_MS,
  ) {}

  /** The value, and until when it may be served (so an answer built from several values knows its own limit). */
  async getOrLoad<T>(connectionId: string, request: DataRequest, mode: CacheMode, load: () => Promise<T>): Promise<CacheEntry<T>> {
    const key = `${connectionId}|${requestKey(request)}`;
    if (mode === 'use') {
      const cached = (await this.guarded('get', () => this.keyv.get(key))) as CacheEntry<T> | undefined;
      if (cached !== undefined) {
        this.events.onHit?.(request.resource);
        return cached;
      }
      const pending = this.inFlight.get(key);
      if (pending) return pending as Promise<CacheEntry<T>>;
    }
    this.events.onMiss?.(request.resource);
    const ttlMs = this.ttlSeconds[request.resource] * 1000;
    const loading = load().then(async (value) => {
      const entry: CacheEntry<T> = { value, freshUntilMs: this.now() + ttlMs };
      await this.guarded('set', () => this.keyv.set(key, entry, ttlMs));
      return entry;
    });
    const shared = loading.finally(() => {
      if (this.inFlight.get(key) === shared) this.inFlight.delete(key);
    });
    this.inFlight.set(key, shared);
    return shared;
  }

  private async guarded<R>(operation: 'get' | 'set', work: () => Promise<R>): Promise<R | undefined> {
    // An in-process cache answers at once: no timer on the hot path.
    if (!Number.isFinite(this.timeoutMs)) {
      try {
        return await work();
      } catch {
        this.events.onFailure?.(operation);
        return undefined;
      }
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.timeoutMs);
      timer.unref();
    });
    try {
      const outcome = await Promise.race([work(), timedOut]);
      if (outcome !== 'timeout') return outcome as R;
    } catch {
      // Counted below: the request goes on without the cache.
    } finally {
      clearTimeout(timer);
    }
    this.events.onFailure?.(operation);
    return undefined;
  }
}

export interface CacheEntry<T> {
  value: T;
  /** Epoch milliseconds when the entry expires. */
  freshUntilMs: number;
}

/** The identity of one data call: resource, id and date range. */
export function requestKey(request: DataRequest): string {
  const id = 'id' in request ? request.id : '';
  const from = 'from' in request ? (request.from ?? '') : '';
  const to = 'to' in request ? (request.to ?? '') : '';
  return `${request.resource}|${id}|${from}|${to}`;
}
