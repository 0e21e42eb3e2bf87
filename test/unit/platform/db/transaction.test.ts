import type { Database } from '../../../../src/platform/db/database';
import { inTransaction } from '../../../../src/platform/db/transaction';
import { TryAgainError } from '../../../../src/platform/errors/gateway-errors';

/** A PostgreSQL store whose first `failures` transactions end in a serialization failure (40001). */
function conflictingStore(failures: number): { database: Database; attempts: () => number } {
  let attempts = 0;
  const execute = async <T>(work: (trx: never) => Promise<T>): Promise<T> => {
    attempts += 1;
    if (attempts <= failures) throw Object.assign(new Error('could not serialize access due to read/write dependencies'), { code: '40001' });
    return work(undefined as never);
  };
  const database = { kind: 'postgres', db: { transaction: () => ({ setIsolationLevel: () => ({ execute }) }) } } as unknown as Database;
  return { database, attempts: () => attempts };
}

describe('inTransaction', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('runs a transaction again after serialization failures, more than ten times if it must', async () => {
    const store = conflictingStore(11);
    const done = inTransaction(store.database, async () => 'saved');
    await jest.runAllTimersAsync();
    await expect(done).resolves.toBe('saved');
    expect(store.attempts()).toBe(12);
  });

  it('gives up with TRY_AGAIN, never an internal error, when the conflicts go on', async () => {
    const store = conflictingStore(Number.POSITIVE_INFINITY);
    const done = inTransaction(store.database, async () => 'saved');
    const outcome = expect(done).rejects.toBeInstanceOf(TryAgainError);
    await jest.runAllTimersAsync();
    await outcome;
    await expect(done).rejects.toMatchObject({ extensions: { code: 'TRY_AGAIN', retryAfterSeconds: 1 }, message: expect.stringContaining('Send it again') });
  });

  it('passes any other error on at once', async () => {
    const database = {
      kind: 'postgres',
      db: { transaction: () => ({ setIsolationLevel: () => ({ execute: async () => Promise.reject(Object.assign(new Error('no'), { code: '23505' })) }) }) },
    } as unknown as Database;
    await expect(inTransaction(database, async () => 'saved')).rejects.toMatchObject({ code: '23505' });
  });

  it.each([
    [1, [20, 40, 80, 160, 320, 640, 1000, 1000, 1000, 1000, 1000]],
    [0.25, [5, 10, 20, 40, 80, 160, 250, 250, 250, 250, 250]],
  ])('waits longer with each attempt, up to a second, at a random point of the window (random %p)', async (random, waits) => {
    const store = conflictingStore(11);
    const randomness = jest.spyOn(Math, 'random').mockReturnValue(random);
    try {
      const done = inTransaction(store.database, async () => 'saved');
      for (const [retry, wait] of waits.entries()) {
        await jest.advanceTimersByTimeAsync(wait - 1);
        expect(store.attempts()).toBe(retry + 1);
        await jest.advanceTimersByTimeAsync(1);
        expect(store.attempts()).toBe(retry + 2);
      }
      await expect(done).resolves.toBe('saved');
    } finally {
      randomness.mockRestore();
    }
  });

  it('may retry at once, at the random start of the window', async () => {
    const store = conflictingStore(11);
    const randomness = jest.spyOn(Math, 'random').mockReturnValue(0);
    try {
      const started = Date.now();
      const done = inTransaction(store.database, async () => 'saved');
      await jest.runAllTimersAsync();
      await expect(done).resolves.toBe('saved');
      expect(Date.now() - started).toBe(0);
    } finally {
      randomness.mockRestore();
    }
  });
});
