import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  CamelCasePlugin,
  CompiledQuery,
  Kysely,
  Migrator,
  PostgresAdapter,
  PostgresDialect,
  SqliteDialect,
  sql,
  type DatabaseConnection,
  type Driver,
  type MigrationProvider,
} from 'kysely';
import type pg from 'pg';
import { MIGRATIONS } from './migrations';
import { openSqliteConnection } from './sqlite.connection';
import type { Tables } from './tables';

export type DatabaseKind = 'sqlite' | 'postgres';

/** The relational store (STORE_URL): money and identity, with constraints and transactions. */
export interface Database {
  readonly kind: DatabaseKind;
  readonly db: Kysely<Tables>;
  /** Resolves when the database answers a query (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** Run pending migrations before answering (the default; `npm run migrate` runs them on their own). */
  migrate?: boolean;
}

/**
 * Opens STORE_URL: `sqlite://<file>` or `sqlite://:memory:` (the embedded default; sqlite.connection.ts) or
 * `postgres://...` (pg; `?options=-c search_path=<schema>` puts the tables in a schema of their own).
 */
export async function openDatabase(url: string, options: OpenDatabaseOptions = {}): Promise<Database> {
  const database = isPostgresUrl(url) ? await openPostgres(url) : openSqlite(sqliteFileOf(url));
  if (options.migrate ?? true) {
    try {
      await migrateToLatest(database.db);
    } catch (error) {
      await database.close();
      throw error;
    }
  }
  return database;
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/**
 * Kysely's migrator on this connection's own schema: without one named, Kysely takes another schema's migration
 * table (another deployment's, another test run's) for this one's.
 */
export async function createMigrator(db: Kysely<Tables>): Promise<Migrator> {
  return new Migrator({ db, provider: STATIC_MIGRATIONS, migrationTableSchema: await postgresSchemaOf(db) });
}

/** Applies every migration not yet applied, in order; says which one failed and why. */
export async function migrateToLatest(db: Kysely<Tables>): Promise<string[]> {
  const migrator = await createMigrator(db);
  let { error, results = [] } = await migrator.migrateToLatest();
  // Kysely reads every schema's tables to find its own; a schema dropped meanwhile (another application's, another
  // test run's) fails that read with 3F000. Nothing was applied then, so reading again is safe.
  for (let retry = 0; retry < 3 && !results.length && codeOf(error) === '3F000'; retry += 1) {
    ({ error, results = [] } = await migrator.migrateToLatest());
  }
  const failed = results.find((result) => result.status === 'Error');
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? 'unknown error');
    throw new Error(`database migration ${failed ? `"${failed.migrationName}" ` : ''}failed: ${reason}`);
  }
  return results.filter((result) => result.status === 'Success').map((result) => result.migrationName);
}

const STATIC_MIGRATIONS: MigrationProvider = { getMigrations: async () => MIGRATIONS };

function codeOf(error: unknown): unknown {
  return (error as { code?: unknown } | null | undefined)?.code;
}

/**
 * On PostgreSQL, the schema the tables live in (the first of search_path). Kysely looks for its migration tables in
 * every schema unless told which: in a database where another schema has them (another bankgraph, or any Kysely
 * application), it would find theirs, create none of its own, and fail on a lock table that is not there.
 */
async function postgresSchemaOf(db: Kysely<Tables>): Promise<string | undefined> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return undefined;
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema;
}

function sqliteFileOf(url: string): string {
  const match = /^sqlite:\/\/(.+)$/.exec(url);
  if (!match) throw new Error(`the relational store needs a sqlite:// or postgres:// URL, got ${url.split(':')[0]}://`);
  return match[1] === ':memory:' ? ':memory:' : resolve(match[1]!);
}

/**
 * SQLite's drivers are synchronous: two connections to one file in one process would block the event loop on each
 * other's locks (the holder cannot finish while the waiter spins in busy_timeout). So a process opens a file once
 * and every gateway in it shares that connection, whose Kysely driver runs one transaction at a time. Separate
 * processes on one file wait for each other through busy_timeout; their write transactions start IMMEDIATE, so a
 * reader never has to upgrade to a writer mid-transaction (which SQLite would refuse at once with SQLITE_BUSY).
 */
const openSqliteFiles = new Map<string, { database: Database; users: number }>();

function openSqlite(file: string): Database {
  if (file !== ':memory:') {
    const shared = openSqliteFiles.get(file);
    if (shared) {
      shared.users += 1;
      return shared.database;
    }
    mkdirSync(dirname(file), { recursive: true });
  }
  const connection = openSqliteConnection(file);
  // synchronous FULL: a committed payout record survives a power cut, not only a crash of this process.
  connection.exec('pragma journal_mode = WAL; pragma synchronous = FULL; pragma busy_timeout = 5000; pragma foreign_keys = ON');
  const db = new Kysely<Tables>({ dialect: new ImmediateSqliteDialect({ database: connection }), plugins: [new CamelCasePlugin()] });
  const database: Database = {
    kind: 'sqlite',
    db,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      const shared = openSqliteFiles.get(file);
      if (shared && --shared.users > 0) return;
      openSqliteFiles.delete(file);
      await db.destroy();
    },
  };
  if (file !== ':memory:') openSqliteFiles.set(file, { database, users: 1 });
  return database;
}

class ImmediateSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection: DatabaseConnection) => {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    };
    return driver;
  }
}

async function openPostgres(url: string): Promise<Database> {
  // Loaded only for a postgres:// store: the default SQLite store does not carry the pg driver.
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: 10, types: numericTypes(pg), connectionTimeoutMillis: 5_000 });
  // An idle client's connection that drops (a database restart) is reported here; the pool replaces it on next use.
  pool.on('error', () => undefined);
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }), plugins: [new CamelCasePlugin()] });
  return {
    kind: 'postgres',
    db,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

/**
 * int8 (bigint columns, counts) and numeric (sums) come back from pg as strings by default; every such value here
 * is an epoch millisecond or an amount in minor units, refused earlier when beyond Number.MAX_SAFE_INTEGER.
 */
function numericTypes(driver: typeof pg): pg.CustomTypesConfig {
  return {
    getTypeParser: ((oid: number, format?: string) =>
      oid === driver.types.builtins.INT8 || oid === driver.types.builtins.NUMERIC
        ? (value: string) => Number(value)
        : driver.types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
  };
}
