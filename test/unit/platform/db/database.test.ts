import { sql } from 'kysely';
import { openDatabase, migrateToLatest, type Database } from '../../../../src/platform/db/database';
import { DatabaseLeases } from '../../../../src/platform/scheduler/database-leases';
import { inTransaction, isUniqueViolation } from '../../../../src/platform/db/transaction';
import { MIGRATIONS } from '../../../../src/platform/db/migrations';
import { createPostgresSchema } from '../../../helpers/postgres';
import { storeBackends } from '../../../helpers/store-backends';

const BACKENDS = storeBackends('db_unit');

describe.each(BACKENDS)('the relational store on $name', (backend) => {
  let url: string;
  let cleanUp: () => Promise<void>;
  let database: Database;

  beforeAll(async () => {
    ({ url, cleanUp } = await backend.open());
    database = await openDatabase(url);
  });

  afterAll(async () => {
    await database?.close();
    await cleanUp?.();
  });

  it('applies every migration at open, and a second run applies none', async () => {
    const applied = await database.db
      .selectFrom('kysely_migration' as never)
      .select(sql<string>`name`.as('name'))
      .execute();
    expect(applied.map((row) => row.name)).toEqual(Object.keys(MIGRATIONS));
    expect(await migrateToLatest(database.db)).toEqual([]);
  });

  it('answers ping, and a second open of the same store sees the same rows', async () => {
    await database.ping();
    await database.db.insertInto('leases').values({ name: 'shared-probe', holder: 'x', expiresAtMs: 1 }).execute();
    const other = await openDatabase(url);
    try {
      expect(await other.db.selectFrom('leases').select('holder').where('name', '=', 'shared-probe').executeTakeFirst()).toEqual({ holder: 'x' });
    } finally {
      await other.close();
    }
    // Closing the second handle leaves the first working (SQLite shares one connection per file per process).
    await database.ping();
  });

  it('gives a lease to one holder at a time, renews it for that holder, and frees it at expiry or release', async () => {
    let now = 1_000_000;
    const clock = () => now;
    const first = new DatabaseLeases(database, clock);
    const second = new DatabaseLeases(database, clock);
    const attempts = await Promise.all([first.hold('reconciler', 1_000), second.hold('reconciler', 1_000)]);
    expect(attempts.filter(Boolean)).toHaveLength(1);
    const [holder, other] = attempts[0] ? [first, second] : [second, first];
    now += 900;
    expect(await holder.hold('reconciler', 1_000)).toBe(true);
    expect(await other.hold('reconciler', 1_000)).toBe(false);
    now += 999;
    expect(await other.hold('reconciler', 1_000)).toBe(false);
    now += 1;
    expect(await other.hold('reconciler', 1_000)).toBe(true);
    expect(await holder.hold('reconciler', 1_000)).toBe(false);
    await other.release('reconciler');
    expect(await holder.hold('reconciler', 1_000)).toBe(true);
  });

  it('holds a check-then-insert limit under concurrent transactions: 12 racers, room for 3', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        inTransaction(database, async (trx) => {
          const { taken } = await trx
            .selectFrom('leases')
            .select((eb) => eb.fn.countAll<number>().as('taken'))
            .where('name', 'like', 'slot-%')
            .executeTakeFirstOrThrow();
          if (Number(taken) >= 3) return false;
          await trx
            .insertInto('leases')
            .values({ name: `slot-${index}`, holder: 'racer', expiresAtMs: 0 })
            .execute();
          return true;
        }),
      ),
    );
    expect(outcomes.filter(Boolean)).toHaveLength(3);
    const rows = await database.db.selectFrom('leases').select('name').where('name', 'like', 'slot-%').execute();
    expect(rows).toHaveLength(3);
  });

  it('tells a unique violation from other errors', async () => {
    await database.db.insertInto('leases').values({ name: 'unique-probe', holder: 'a', expiresAtMs: 0 }).execute();
    const duplicate = await database.db
      .insertInto('leases')
      .values({ name: 'unique-probe', holder: 'b', expiresAtMs: 0 })
      .execute()
      .catch((error: unknown) => error);
    expect(isUniqueViolation(duplicate)).toBe(true);
    const other = await sql`select * from no_such_table`.execute(database.db).catch((error: unknown) => error);
    expect(String(other)).toContain('no_such_table');
    expect(isUniqueViolation(other)).toBe(false);
  });

  it('rolls a failed transaction back whole', async () => {
    await expect(
      inTransaction(database, async (trx) => {
        await trx.insertInto('leases').values({ name: 'rolled-back', holder: 'a', expiresAtMs: 0 }).execute();
        throw new Error('refused half-way');
      }),
    ).rejects.toThrow('refused half-way');
    expect(await database.db.selectFrom('leases').select('name').where('name', '=', 'rolled-back').execute()).toEqual([]);
  });
});

describe('openDatabase', () => {
  it('keeps its migration tables in its own PostgreSQL schema when another schema of the database has them', async () => {
    const [first, second] = [await createPostgresSchema('db_first'), await createPostgresSchema('db_second')];
    const opened: Database[] = [];
    try {
      opened.push(await openDatabase(first.url));
      opened.push(await openDatabase(second.url));
      const { rows } = await sql<{ schema: string }>`select table_schema as schema from information_schema.tables where table_name = 'kysely_migration_lock'
        and table_schema in (${first.name}, ${second.name}) order by table_schema`.execute(opened[1]!.db);
      expect(rows.map((row) => row.schema).sort()).toEqual([first.name, second.name].sort());
    } finally {
      await Promise.all(opened.map((database) => database.close()));
      await first.drop();
      await second.drop();
    }
  });

  it('refuses a store URL it cannot open, naming the scheme', async () => {
    await expect(openDatabase('redis://127.0.0.1:6379')).rejects.toThrow('the relational store needs a sqlite:// or postgres:// URL, got redis://');
  });
});
