import type { Database } from '../platform/db/database';
import { isUniqueViolation } from '../platform/db/transaction';

/** One accepted webhook delivery. */
export interface InboxEntry {
  /** The route it came by (`payments`: refund events by event_id; `data`: async data notifications by task id and status). */
  source: string;
  eventId: string;
  /** What the handler called it: the refund event's `type`, or the data notification's `status`. */
  type: string;
  receivedAt: string;
  /** The body as received (parsed). */
  body: unknown;
}

/**
 * Kept a week: far longer than a provider retries a delivery (README: 15 s) or than a signed delivery stays
 * acceptable (WEBHOOK_MAX_SKEW: 5 minutes unless set, an hour at most), so a duplicate is always recognised, and long enough to answer "did that event arrive?".
 */
export const INBOX_TTL_MS = 7 * 24 * 3600 * 1000;

/** Expired rows are swept at most this often, by whichever claim comes first after it. */
const SWEEP_INTERVAL_MS = 3600 * 1000;

/**
 * The webhook inbox in the relational store: every accepted event, once per source and event id. `claim` is the
 * gate to publishing: of any number of deliveries of one event, to any number of gateway instances sharing the
 * database, the primary key lets exactly one insert through, and only that delivery publishes. An expired entry
 * may be claimed again, which is what its lifetime means.
 */
export class EventInbox {
  private lastSweep = 0;

  constructor(
    private readonly database: Database,
    private readonly now: () => number = Date.now,
  ) {}

  /** Stores the entry unless a live one with its source and id exists; true when this call stored it. */
  async claim(entry: InboxEntry): Promise<boolean> {
    const now = this.now();
    const row = {
      source: entry.source,
      eventId: entry.eventId,
      type: entry.type,
      body: JSON.stringify(entry.body),
      receivedAtMs: Date.parse(entry.receivedAt),
      expiresAtMs: now + INBOX_TTL_MS,
    };
    try {
      const stored = await this.database.db
        .insertInto('webhookEvents')
        .values(row)
        .onConflict((conflict) =>
          conflict
            .columns(['source', 'eventId'])
            .doUpdateSet((eb) => ({
              type: eb.ref('excluded.type'),
              body: eb.ref('excluded.body'),
              receivedAtMs: eb.ref('excluded.receivedAtMs'),
              expiresAtMs: eb.ref('excluded.expiresAtMs'),
            }))
            .where('webhookEvents.expiresAtMs', '<=', now),
        )
        .returning('eventId')
        .executeTakeFirst();
      void this.sweep(now);
      return stored !== undefined;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  async get(source: InboxEntry['source'], eventId: string): Promise<InboxEntry | undefined> {
    const row = await this.database.db
      .selectFrom('webhookEvents')
      .selectAll()
      .where('source', '=', source)
      .where('eventId', '=', eventId)
      .where('expiresAtMs', '>', this.now())
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      source: row.source,
      eventId: row.eventId,
      type: row.type,
      receivedAt: new Date(Number(row.receivedAtMs)).toISOString(),
      body: JSON.parse(row.body) as unknown,
    };
  }

  private async sweep(now: number): Promise<void> {
    if (now - this.lastSweep < SWEEP_INTERVAL_MS) return;
    this.lastSweep = now;
    await this.database.db
      .deleteFrom('webhookEvents')
      .where('expiresAtMs', '<=', now)
      .execute()
      .catch(() => undefined);
  }
}
