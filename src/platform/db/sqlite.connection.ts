import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** One open SQLite file, in the shape Kysely's SqliteDialect drives, plus the statements run once at open. */
export interface SqliteConnection extends SqliteDatabase {
  /** Which driver opened it: Node's own `node:sqlite` where the runtime has it, better-sqlite3 on Node 20. */
  readonly driver: 'node:sqlite' | 'better-sqlite3';
  exec(sql: string): void;
}

/**
 * Opens `file` (or `:memory:`) with Node's built-in SQLite where the runtime provides it, else better-sqlite3.
 *
 * Why two drivers: better-sqlite3 12 (the last line that runs on Node 20) aborts the process on Node 24.19 and
 * later, whose ObjectWrap destructor asserts an entered context that a statement finalised by an idle GC does not
 * have; better-sqlite3 13 fixes that but crashes on Node 20. `node:sqlite` is part of Node from 22.13 on and is
 * used wherever it can tell whether a statement returns rows (`StatementSync#columns`, Node 22.16 and 24), which
 * Kysely needs; better-sqlite3 is then never loaded.
 */
export function openSqliteConnection(file: string): SqliteConnection {
  const builtin = process.getBuiltinModule('node:sqlite') as NodeSqliteModule | undefined;
  if (builtin && typeof builtin.StatementSync?.prototype.columns === 'function') return openWithNodeSqlite(builtin, file);
  return openWithBetterSqlite3(file);
}

/** The part of `node:sqlite` used here (its types are not in @types/node 20). */
interface NodeSqliteModule {
  DatabaseSync: new (file: string) => NodeSqliteDatabase;
  StatementSync?: { prototype: { columns?: unknown } };
}

interface NodeSqliteDatabase {
  exec(sql: string): void;
  prepare(sql: string): NodeSqliteStatement;
  close(): void;
}

interface NodeSqliteStatement {
  columns(): unknown[];
  all(...parameters: unknown[]): unknown[];
  run(...parameters: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(...parameters: unknown[]): IterableIterator<unknown>;
}

function openWithNodeSqlite(module: NodeSqliteModule, file: string): SqliteConnection {
  const database = new module.DatabaseSync(file);
  return {
    driver: 'node:sqlite',
    exec: (sql) => database.exec(sql),
    close: () => database.close(),
    prepare(sql): SqliteStatement {
      const statement = database.prepare(sql);
      return {
        reader: statement.columns().length > 0,
        all: (parameters) => statement.all(...parameters),
        run: (parameters) => statement.run(...parameters),
        iterate: (parameters) => statement.iterate(...parameters),
      };
    },
  };
}

function openWithBetterSqlite3(file: string): SqliteConnection {
  // Required here, not imported at the top: on a Node with node:sqlite the native module is never loaded.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const BetterSqlite3 = require('better-sqlite3') as typeof import('better-sqlite3');
  const database = new BetterSqlite3(file);
  return {
    driver: 'better-sqlite3',
    exec: (sql) => void database.exec(sql),
    close: () => void database.close(),
    prepare: (sql) => database.prepare(sql),
  };
}

/**
 * SQLite's extended result codes for a refused unique or primary key: better-sqlite3 names them in `code`,
 * node:sqlite numbers them in `errcode`.
 */
const UNIQUE_VIOLATIONS = new Set<unknown>(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', 2067, 1555]);

export function isSqliteUniqueViolation(error: unknown): boolean {
  const { code, errcode } = (error ?? {}) as { code?: unknown; errcode?: unknown };
  return UNIQUE_VIOLATIONS.has(code) || UNIQUE_VIOLATIONS.has(errcode);
}
