import { BoundedMap } from './bounded-map';

/**
 * What an instance remembers for a moment, so a burst of requests costs one store read (a session, a user's
 * connection list): each entry is good for `ttlMs` after it was set; at most `maxEntries`, the oldest going first.
 */
export class RecentMap<K, V> {
  private readonly entries: BoundedMap<K, { value: V; untilMs: number }>;

  constructor(
    maxEntries: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.entries = new BoundedMap(maxEntries);
  }

  /** The value set less than ttlMs ago, if any. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    return entry !== undefined && entry.untilMs > this.now() ? entry.value : undefined;
  }

  set(key: K, value: V): void {
    this.entries.set(key, { value, untilMs: this.now() + this.ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Forgets every entry whose value matches (e.g. all of one user's sessions). */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.entries.delete(key);
  }
}
