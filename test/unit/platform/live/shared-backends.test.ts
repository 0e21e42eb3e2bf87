import { randomUUID } from 'node:crypto';
import { createLogger } from '../../../../src/platform/observability/logger';
import { openDatabase, type Database } from '../../../../src/platform/db/database';
import { EventInbox, INBOX_TTL_MS, type InboxEntry } from '../../../../src/webhooks/event-inbox';
import { createPostgresSchema } from '../../../helpers/postgres';
import { RedisLeases, InProcessLeases } from '../../../../src/platform/scheduler/lease';
import { RedisConnection } from '../../../../src/platform/store/redis-connection';
import { RedisEventBus } from '../../../../src/platform/live/redis-event-bus';
import { deleteRedisKeys, REDIS_URL } from '../../../helpers/redis';
import { waitFor } from '../../../helpers/wait-for';

/*
 * The backends that make several instances act as one: the inbox's atomic claim, leases, and the Redis event bus.
 * Redis must run on 127.0.0.1:6379 (.ci/run starts it); these tests fail without it. The inbox is tested on SQLite
 * and on PostgreSQL (TEST_POSTGRES_URL, or the local server this machine kind runs; without one the test fails).
 */

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

describe.each([
  { name: 'SQLite', open: async () => ({ url: 'sqlite://:memory:', drop: async () => undefined }) },
  {
    name: 'PostgreSQL',
    open: async () => {
      const schema = await createPostgresSchema('inbox');
      return { url: schema.url, drop: () => schema.drop() };
    },
  },
])('the webhook inbox on $name', ({ open }) => {
  let databases: Database[] = [];
  let drop: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    const opened = await open();
    drop = opened.drop;
    // Two handles: two instances on one store (one shared connection on SQLite in-memory, two pools on PostgreSQL).
    const first = await openDatabase(opened.url);
    databases = [first, opened.url.startsWith('sqlite') ? first : await openDatabase(opened.url)];
  });

  afterAll(async () => {
    await Promise.allSettled([...new Set(databases)].map((database) => database.close()));
    await drop();
  });

  it('claims an event once across instances, and again once its entry expired', async () => {
    await claimRace(databases.map((database) => new EventInbox(database)));
    let clock = Date.now();
    const inbox = new EventInbox(databases[0]!, () => clock);
    const eventId = randomUUID();
    expect(await inbox.claim(entry(eventId))).toBe(true);
    clock += INBOX_TTL_MS;
    expect(await inbox.get('payments', eventId)).toBeUndefined();
    expect(await new EventInbox(databases[1]!, () => clock).claim(entry(eventId))).toBe(true);
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
    await deleteRedisKeys(PREFIX);
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
