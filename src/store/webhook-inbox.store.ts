import type Keyv from 'keyv';
import type { RedisConnection } from '../subscriptions/redis-connection';
import { KeyedMutex } from './keyed-mutex';

/** One accepted webhook delivery. */
export interface InboxEntry {
  /** `payments` (refund events, by event_id) or `data` (async data notifications, by task_id and status). */
  source: 'payments' | 'data';
  eventId: string;
  /** The refund event's `type`, or the data notification's `status`. */
  type: string;
  receivedAt: string;
  /** The body as received (parsed). */
  body: unknown;
}

/**
 * Kept a week: far longer than a provider retries a delivery (docs/provider-choices.md: 15 s) or than a signed delivery stays
 * acceptable (5 minutes), so a duplicate is always recognised, and long enough to answer "did that event arrive?".
 */
export const INBOX_TTL_MS = 7 * 24 * 3600 * 1000;

/**
 * The webhook inbox: every accepted event, deduplicated by event id. `claim` is the gate to publishing: of any
 * number of deliveries of one event, to any number of gateway instances sharing the store, exactly one claim
 * returns true, and only that delivery publishes.
 */
export interface EventInbox {
  /** Stores the entry unless one with its source and id exists; true when this call stored it. Atomic. */
  claim(entry: InboxEntry): Promise<boolean>;
  get(source: InboxEntry['source'], eventId: string): Promise<InboxEntry | undefined>;
}

const keyOf = (source: string, eventId: string): string => `${source}:${eventId}`;

/**
 * STORE_URL=sqlite:// (one instance): keyv has no compare-and-set, so the check and the write run under a
 * per-key lock of this process. Durable, but atomic only within one process, which is all SQLite serves.
 */
export class KeyvEventInbox implements EventInbox {
  private readonly mutex = new KeyedMutex();

  constructor(private readonly keyv: Keyv<InboxEntry>) {}

  claim(entry: InboxEntry): Promise<boolean> {
    const key = keyOf(entry.source, entry.eventId);
    return this.mutex.run(key, async () => {
      if ((await this.keyv.get(key)) !== undefined) return false;
      await this.keyv.set(key, entry, INBOX_TTL_MS);
      return true;
    });
  }

  async get(source: InboxEntry['source'], eventId: string): Promise<InboxEntry | undefined> {
    return this.keyv.get(keyOf(source, eventId));
  }
}

/** STORE_URL=redis://: `SET key entry NX PX ttl`, which Redis runs atomically whoever sends it. */
export class RedisEventInbox implements EventInbox {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
  ) {}

  async claim(entry: InboxEntry): Promise<boolean> {
    const reply = await this.redis.run('SET NX', (client) =>
      client.set(this.key(entry.source, entry.eventId), JSON.stringify(entry), { condition: 'NX', expiration: { type: 'PX', value: INBOX_TTL_MS } }),
    );
    return reply === 'OK';
  }

  async get(source: InboxEntry['source'], eventId: string): Promise<InboxEntry | undefined> {
    const text = await this.redis.run('GET', (client) => client.get(this.key(source, eventId)));
    return typeof text === 'string' ? (JSON.parse(text) as InboxEntry) : undefined;
  }

  private key(source: string, eventId: string): string {
    return `${this.prefix}webhook-inbox:${keyOf(source, eventId)}`;
  }
}

export type SqlQuery = (sql: string, values?: unknown[]) => Promise<Record<string, unknown>[]>;

/** Expired rows are swept at most this often, by whichever claim comes first after it. */
const SWEEP_INTERVAL_MS = 3600 * 1000;

/**
 * STORE_URL=postgres://: a table of its own, `INSERT ... ON CONFLICT DO NOTHING`-style, so the primary key decides
 * which of several concurrent claims wins. An expired entry may be claimed again (the conflict update only
 * applies to expired rows), which is what its TTL means.
 */
export class PostgresEventInbox implements EventInbox {
  private ready: Promise<void> | undefined;
  private lastSweep = 0;

  constructor(
    private readonly query: SqlQuery,
    private readonly table = 'bankgraph_webhook_inbox',
  ) {
    if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error(`invalid inbox table name ${table}`);
  }

  async claim(entry: InboxEntry): Promise<boolean> {
    await this.ensureTable();
    const rows = await this.query(
      `INSERT INTO ${this.table} (id, entry, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
       ON CONFLICT (id) DO UPDATE SET entry = EXCLUDED.entry, expires_at = EXCLUDED.expires_at
       WHERE ${this.table}.expires_at < now()
       RETURNING id`,
      [keyOf(entry.source, entry.eventId), JSON.stringify(entry), INBOX_TTL_MS],
    );
    void this.sweep();
    return rows.length === 1;
  }

  async get(source: InboxEntry['source'], eventId: string): Promise<InboxEntry | undefined> {
    await this.ensureTable();
    const rows = await this.query(`SELECT entry FROM ${this.table} WHERE id = $1 AND expires_at >= now()`, [keyOf(source, eventId)]);
    const text = rows[0]?.entry;
    return typeof text === 'string' ? (JSON.parse(text) as InboxEntry) : undefined;
  }

  private ensureTable(): Promise<void> {
    this.ready ??= this.query(
      `CREATE TABLE IF NOT EXISTS ${this.table} (id TEXT PRIMARY KEY, entry TEXT NOT NULL, expires_at TIMESTAMPTZ NOT NULL)`,
    ).then(
      () => undefined,
      (error: unknown) => {
        // Two instances creating the table at once: the loser sees a unique violation on the catalogue; the table exists.
        if ((error as { code?: unknown }).code === '23505') return;
        this.ready = undefined;
        throw error;
      },
    );
    return this.ready;
  }

  private async sweep(): Promise<void> {
    if (Date.now() - this.lastSweep < SWEEP_INTERVAL_MS) return;
    this.lastSweep = Date.now();
    await this.query(`DELETE FROM ${this.table} WHERE expires_at < now()`).catch(() => undefined);
  }
}
