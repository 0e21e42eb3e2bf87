import type Keyv from 'keyv';

/** Apollo keeps APQ entries until evicted; a day bounds what a client can park in a shared Redis. */
export const APQ_TTL_MS = 24 * 60 * 60 * 1000;

/** What one principal may register over a day (PERSISTED_DOCUMENTS_APQ_MAX_*). */
export interface ApqQuota {
  documents: number;
  bytes: number;
}

interface Usage {
  documents: number;
  bytes: number;
  /** When this principal's day started: its first registration. */
  sinceMs: number;
}

/**
 * Documents learned by APQ, in the cache backend (CACHE_URL), so every instance on one Redis knows a hash any of
 * them was taught. A document is stored only when it is one this gateway would run (it parses and passes
 * validation, limits included), and only within its principal's quota, so a client cannot park junk or fill the
 * store. A document not stored still runs (or fails) as text: APQ only saves resending it.
 *
 * The quota is read and then written, not incremented atomically: registrations racing each other for one
 * principal can pass it by as many as race, which the rate limit bounds.
 */
export class ApqStore {
  constructor(
    private readonly keyv: Keyv<string>,
    /** True when the text is a document this gateway would run. */
    private readonly isRunnable: (text: string) => boolean,
    private readonly quota: ApqQuota,
    private readonly now: () => number = Date.now,
  ) {}

  get(hash: string): Promise<string | undefined> {
    return this.keyv.get(hash);
  }

  /** Stores `text` under its hash for `principalKey`; false when it was not stored (not runnable, over quota, no principal). */
  async register(hash: string, text: string, principalKey: string | undefined): Promise<boolean> {
    if (principalKey === undefined) return false;
    if ((await this.keyv.get(hash)) !== undefined) return true;
    if (!this.isRunnable(text)) return false;
    const usageKey = `usage:${principalKey}`;
    const now = this.now();
    const usage = parseUsage(await this.keyv.get(usageKey), now) ?? { documents: 0, bytes: 0, sinceMs: now };
    const bytes = Buffer.byteLength(text, 'utf8');
    if (usage.documents + 1 > this.quota.documents || usage.bytes + bytes > this.quota.bytes) return false;
    await this.keyv.set(hash, text, APQ_TTL_MS);
    const updated: Usage = { documents: usage.documents + 1, bytes: usage.bytes + bytes, sinceMs: usage.sinceMs };
    await this.keyv.set(usageKey, JSON.stringify(updated), usage.sinceMs + APQ_TTL_MS - now);
    return true;
  }

  disconnect(): Promise<void> {
    return this.keyv.disconnect();
  }
}

/** The stored usage, unless it is from a day that has ended (a store that does not expire keys on time). */
function parseUsage(stored: string | undefined, now: number): Usage | undefined {
  if (stored === undefined) return undefined;
  try {
    const usage = JSON.parse(stored) as Usage;
    return typeof usage.documents === 'number' && typeof usage.bytes === 'number' && usage.sinceMs + APQ_TTL_MS > now ? usage : undefined;
  } catch {
    return undefined;
  }
}
