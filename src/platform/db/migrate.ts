import { ConfigError, loadConfig } from '../config/config';
import { migrateToLatest, openDatabase } from './database';

/** `npm run migrate`: applies pending migrations to STORE_URL and says which (the gateway also does at start). */
async function main(): Promise<void> {
  const config = loadConfig();
  const database = await openDatabase(config.store.url, { migrate: false });
  try {
    const applied = await migrateToLatest(database.db);
    console.log(applied.length > 0 ? `applied ${applied.join(', ')}` : 'the database is up to date');
  } finally {
    await database.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : `migration failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
