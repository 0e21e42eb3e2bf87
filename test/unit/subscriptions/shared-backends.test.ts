import { randomUUID } from 'node:crypto';
import KeyvPostgres from '@keyv/postgres';
import { createClient } from 'redis';
import Keyv from 'keyv';
import { createLogger } from '../../../src/logger';
import { KeyvEventInbox, PostgresEventInbox, RedisEventInbox, type EventInbox, type InboxEntry, type SqlQuery } from '../../../src/store/webhook-inbox.store';
import { RedisLeases, InProcessLeases } from '../../../src/subscriptions/lease';
import { RedisConnection } from '../../../src/subscriptions/redis-connection';
import { RedisEventBus } from '../../../src/subscriptions/redis-event-bus';
import { waitFor } from '../../helpers/wait-for';

/*
 * The backends that make several instances act as one: the inbox's atomic claim, leases, and the Redis event bus.
 * Redis must run on 127.0.0.1:6379 (.ci/run starts it); these tests fail without it. The Postgres inbox is tested
 * against TEST_POSTGRES_URL, or the local server this machine kind runs; without one the test fails and says so.
 */

const REDIS_URL = 'redis://127.0.0.1:6379';
const PREFIX = `bankgraph-unit-${randomUUID().slice(0, 8)}:`;
const logger = createLogger('silent');

function entry(eventId: string): InboxEntry {
  return { source: 'payments', eventId, type: 'refund_executed', receivedAt: new Date().toISOString(), body: { event_id: eventId } };
}

/** Ten deliveries of one event at once, to `inboxes` in turn: exactly one may win. */
async function claimRace(inboxes: EventInbox[]): Promise<void> {
  const eventId = randomUUID();
  const results = await Promise.all(Array.from({ length: 10 }, (_, index) => inboxes[index % inboxes.length]!.claim(entry(eventId))));
  expect(results.filter(Boolean)).toHaveLength(1);
  expect(await inboxes[0]!.get('payments', eventId)).toMatchObject({ eventId, type: 'refund_executed' });
  expect(await inboxes[0]!.get('data', eventId)).toBeUndefined();
  expect(await inboxes.at(-1)!.claim(entry(eventId))).toBe(false);
}

describe('the webhook inbox', () => {
  it('claims an event once per process over keyv (SQLite, memory)', async () => {
    const keyv = new Keyv<InboxEntry>({ store: new Map() });
    await claimRace([new KeyvEventInbox(keyv)]);
  });

  describe('on Redis', () => {
    const connections: RedisConnection[] = [];
    afterAll(async () => {
      await Promise.allSettled(connections.map((connection) => connection.close()));
    });

    it('claims an event once across instances (SET NX)', async () => {
      const inboxes = [0, 1, 2].map(() => {
        const connection = new RedisConnection(REDIS_URL, 'test', logger);
        connections.push(connection);
        return new RedisEventInbox(connection, PREFIX);
      });
      await claimRace(inboxes);
    });
  });

  describe('on Postgres', () => {
    const url = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    let adapter: KeyvPostgres | undefined;
    let query: SqlQuery | undefined;
    const table = `bankgraph_inbox_test_${randomUUID().slice(0, 8)}`;

    beforeAll(async () => {
      const candidate = new KeyvPostgres({ uri: url, table: `${table}_kv`, connectionTimeoutMillis: 2_000 });
      candidate.on('error', () => undefined);
      adapter = candidate;
      try {
        await candidate.query('SELECT 1');
      } catch (error) {
        throw new Error(`Postgres is not reachable at ${url} (${String(error)}); start it or set TEST_POSTGRES_URL.`, { cause: error });
      }
      query = candidate.query as SqlQuery;
    });

    afterAll(async () => {
      await query?.(`DROP TABLE IF EXISTS ${table}, ${table}_kv`);
      await adapter?.disconnect();
    });

    it('claims an event once across instances (primary key, ON CONFLICT)', async () => {
      if (!query) throw new Error('Postgres was not connected in beforeAll');
      await claimRace([new PostgresEventInbox(query, table), new PostgresEventInbox(query, table)]);
      // An expired entry can be claimed again.
      const eventId = randomUUID();
      const inbox = new PostgresEventInbox(query, table);
      expect(await inbox.claim(entry(eventId))).toBe(true);
      await query(`UPDATE ${table} SET expires_at = now() - interval '1 second' WHERE id = $1`, [`payments:${eventId}`]);
      expect(await inbox.get('payments', eventId)).toBeUndefined();
      expect(await inbox.claim(entry(eventId))).toBe(true);
    });
  });
});

describe('leases and the Redis event bus', () => {
  const connections: RedisConnection[] = [];
  const connect = (role: string): RedisConnection => {
    const connection = new RedisConnection(REDIS_URL, role, logger);
    connections.push(connection);
    return connection;
  };

  afterAll(async () => {
    const client = createClient({ url: REDIS_URL });
    client.on('error', () => undefined);
    await client.connect();
    for await (const keys of client.scanIterator({ MATCH: `${PREFIX}*` })) if (keys.length > 0) await client.del(keys);
    await client.close();
    await Promise.allSettled(connections.map((connection) => connection.close()));
  });

  it('gives a Redis lease to one holder at a time, renews it for its holder, and frees it on release', async () => {
    const one = new RedisLeases(connect('commands'), PREFIX);
    const two = new RedisLeases(connect('commands'), PREFIX);
    const name = `payout:${randomUUID()}`;
    const first = await Promise.all([one.hold(name, 5_000), two.hold(name, 5_000)]);
    expect(first.filter(Boolean)).toHaveLength(1);
    const [holder, other] = first[0] ? [one, two] : [two, one];
    expect(await holder.hold(name, 5_000)).toBe(true);
    expect(await other.hold(name, 5_000)).toBe(false);
    await other.release(name); // not its lease: nothing happens
    expect(await other.hold(name, 5_000)).toBe(false);
    await holder.release(name);
    expect(await other.hold(name, 5_000)).toBe(true);
  });

  it('lets an expired Redis lease go to another holder', async () => {
    const one = new RedisLeases(connect('commands'), PREFIX);
    const two = new RedisLeases(connect('commands'), PREFIX);
    const name = `payout:${randomUUID()}`;
    expect(await one.hold(name, 100)).toBe(true);
    await waitFor(async () => ((await two.hold(name, 5_000)) ? true : undefined), 'the lease to expire');
    expect(await one.hold(name, 5_000)).toBe(false);
  });

  it('always grants an in-process lease: each process watches for its own subscribers', async () => {
    const leases = new InProcessLeases();
    expect(await leases.hold('x', 1_000)).toBe(true);
    expect(await leases.hold('x', 1_000)).toBe(true);
  });

  it('carries an event published on one instance to listeners on another, and stops when they leave', async () => {
    const publisher = new RedisEventBus(connect('commands'), connect('subscriber'), PREFIX, logger);
    const receiver = new RedisEventBus(connect('commands'), connect('subscriber'), PREFIX, logger);
    const seen: unknown[] = [];
    const stopOne = await receiver.listen('topic:1', (payload) => seen.push(['one', payload]));
    const stopTwo = await receiver.listen('topic:1', (payload) => seen.push(['two', payload]));
    await receiver.listen('topic:2', (payload) => seen.push(['other', payload]));
    await publisher.publish('topic:1', { n: 1 });
    await waitFor(() => (seen.length >= 2 ? true : undefined), 'both listeners to receive the event');
    expect(seen).toEqual([
      ['one', { n: 1 }],
      ['two', { n: 1 }],
    ]);
    // Parsed once for both listeners, and frozen, since they share it.
    const [[, first], [, second]] = seen as [string, object][];
    expect(first).toBe(second);
    expect(Object.isFrozen(first)).toBe(true);
    await stopOne();
    await publisher.publish('topic:1', { n: 2 });
    await waitFor(() => (seen.length >= 3 ? true : undefined), 'the remaining listener to receive the event');
    await stopTwo();
    await publisher.publish('topic:1', { n: 3 });
    await publisher.publish('topic:2', { n: 4 });
    await waitFor(() => (seen.length >= 4 ? true : undefined), 'the other topic’s event');
    expect(seen.slice(2)).toEqual([
      ['two', { n: 2 }],
      ['other', { n: 4 }],
    ]);
    await expect(publisher.checkReady()).resolves.toBeUndefined();
  });
});
