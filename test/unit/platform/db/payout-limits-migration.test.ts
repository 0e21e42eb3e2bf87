import { createMigrator, migrateToLatest, openDatabase, type Database } from '../../../../src/platform/db/database';
import { storeBackends } from '../../../helpers/store-backends';

const BACKENDS = storeBackends('payout_limits_migration');

describe.each(BACKENDS)('migration 0005_payout_limits on $name', (backend) => {
  let cleanUp: () => Promise<void>;
  let database: Database;

  beforeAll(async () => {
    const opened = await backend.open();
    cleanUp = opened.cleanUp;
    database = await openDatabase(opened.url, { migrate: false });
  });

  afterAll(async () => {
    await database?.close();
    await cleanUp?.();
  });

  it('gives the payouts recorded before it their beneficiary IBAN, read from the recorded request', async () => {
    const migrator = await createMigrator(database.db);
    expect((await migrator.migrateTo('0003_identity')).error).toBeUndefined();
    const row = (transactionId: string, iban: string) => ({
      transactionId,
      owner: 'user:someone',
      status: 'settled',
      currency: 'GBP',
      amountInMinor: 100,
      request: JSON.stringify({ transaction_id: transactionId, beneficiary_iban: iban, amount_in_minor: 100, currency: 'GBP' }),
      queuedAtMs: 1,
      createdAtMs: 1,
      updatedAtMs: 1,
    });
    // Written as the gateway wrote them before the column existed.
    await database.db
      .insertInto('payouts')
      .values([row('old-1', 'GB33BUKB20201555555555'), row('old-2', 'DE89370400440532013000')] as never)
      .execute();

    expect(await migrateToLatest(database.db)).toContain('0005_payout_limits');
    const ibans = await database.db.selectFrom('payouts').select(['transactionId', 'beneficiaryIban']).orderBy('transactionId').execute();
    expect(ibans).toEqual([
      { transactionId: 'old-1', beneficiaryIban: 'GB33BUKB20201555555555' },
      { transactionId: 'old-2', beneficiaryIban: 'DE89370400440532013000' },
    ]);
  });
});
