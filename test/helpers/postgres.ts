import { randomUUID } from 'node:crypto';
import pg from 'pg';

/** The PostgreSQL the tests use (this machine kind runs one; .ci/run starts it when it is down). */
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface PostgresSchema {
  /** STORE_URL for a gateway whose tables live in this schema alone. */
  url: string;
  name: string;
  drop(): Promise<void>;
}

/**
 * A schema of its own for one test file, so test runs (and engineers) sharing one PostgreSQL never see each
 * other's rows. Fails with a message that says what to start when PostgreSQL is not there: never skips.
 */
export async function createPostgresSchema(label = 'test'): Promise<PostgresSchema> {
  const name = `bankgraph_${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomUUID().slice(0, 8)}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3_000 });
  try {
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${name}`);
  } catch (error) {
    throw new Error(
      `PostgreSQL is not reachable at ${POSTGRES_URL} (${String(error)}). These tests need it: start it with ` +
        '`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start` (.ci/run does), or set TEST_POSTGRES_URL.',
      { cause: error },
    );
  } finally {
    await admin.end().catch(() => undefined);
  }
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('options', `-c search_path=${name}`);
  return {
    url: url.toString(),
    name,
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}
