import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { growingLru } from '../store/growing-lru';

export interface CachedAnswer {
  /** The operation's name as GraphQL resolved it (the request need not name it), for logs and metrics. */
  operationName: string | undefined;
  headers: [string, string][];
  /** The answer's bytes: served again as they are, with no encoding or copy per request. */
  body: Buffer;
  freshUntilMs: number;
}

/**
 * Whole HTTP answers to a user's read-only queries over the data API, served again to the same user for the same
 * request bytes until the first data-cache entry behind them expires: a warm query then costs a lookup instead of
 * executing thousands of fields. Per instance and in memory: it is derived from the shared data cache and short-lived.
 * Only what `isAnswerCacheable` allows is stored, and only answers without errors.
 */
export class AnswerCache {
  private readonly entries: LRUCache<string, CachedAnswer>;
  /** Bumped when a user's banks change: their keys change with it, so nothing kept before is served again. */
  private readonly generations = growingLru<string, number>(10_000);

  constructor(
    maxEntries = 1_000,
    private readonly now: () => number = Date.now,
  ) {
    this.entries = new LRUCache({ max: maxEntries });
  }

  /** Keyed by the user (and their banks' generation) and the exact body: variables, operation name and document. */
  keyFor(userId: string, body: Buffer): string {
    // One-shot crypto.hash: a Hash object (a stream) per request cost more than hashing the bytes.
    return hash('sha256', Buffer.concat([Buffer.from(`${userId}#${this.generations.get(userId) ?? 0}\n`), body]), 'base64url');
  }

  /** A bank was connected or disconnected, or the user signed out or was revoked: their kept answers go stale. */
  forgetUser(userId: string): void {
    this.generations.set(userId, (this.generations.get(userId) ?? 0) + 1);
  }

  get(key: string): CachedAnswer | undefined {
    const answer = this.entries.get(key);
    if (!answer) return undefined;
    if (answer.freshUntilMs > this.now()) return answer;
    this.entries.delete(key);
    return undefined;
  }

  put(key: string, answer: CachedAnswer): void {
    if (answer.freshUntilMs > this.now()) this.entries.set(key, answer);
  }
}
