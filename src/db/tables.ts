/**
 * The relational store's tables as Kysely sees them (camelCase here, snake_case in SQL: CamelCasePlugin).
 * Conventions, the same on SQLite and PostgreSQL so one migration serves both:
 * - times are epoch milliseconds in integer/bigint columns named `...AtMs` (exact, and cheap to compare for windows);
 * - amounts are integer minor units; JSON documents are text, parsed by the owning store;
 * - booleans are integers 0/1.
 * Each feature's tables are declared in its own section and created by its own migration (src/db/migrations/).
 */
export interface Tables {
  leases: LeasesTable;
}

/** A named lease (background jobs run by one instance at a time): who holds it and until when. */
export interface LeasesTable {
  name: string;
  holder: string;
  expiresAtMs: number;
}
