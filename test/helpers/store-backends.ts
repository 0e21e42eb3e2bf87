import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPostgresSchema } from './postgres';

/** One relational store a suite runs on: a fresh SQLite file, or a PostgreSQL schema of its own. */
export interface StoreBackend {
  name: 'SQLite' | 'PostgreSQL';
  open(): Promise<{ url: string; cleanUp(): Promise<void> }>;
}

/** Both stores the gateway supports, for `describe.each`; `label` names the temporary file and schema. */
export function storeBackends(label: string): StoreBackend[] {
  return [
    {
      name: 'SQLite',
      async open() {
        const directory = mkdtempSync(join(tmpdir(), `bankgraph-${label}-`));
        return { url: `sqlite://${join(directory, 'store.sqlite')}`, cleanUp: async () => rmSync(directory, { recursive: true, force: true }) };
      },
    },
    {
      name: 'PostgreSQL',
      async open() {
        const schema = await createPostgresSchema(label.replace(/-/g, '_'));
        return { url: schema.url, cleanUp: () => schema.drop() };
      },
    },
  ];
}
