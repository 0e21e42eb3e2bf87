import type { BankConnectionRecord } from '../identity';

/** One bank connection that failed while the others answered. */
export interface ConnectionFailure {
  connection: BankConnectionRecord;
  error: unknown;
}

/** What every connection gave, and which of them failed. */
export interface FromEveryConnection<T> {
  items: T[];
  failures: ConnectionFailure[];
}

/**
 * `load` for each active connection, all at once (so two banks cost no more round trips than one). A bank that
 * fails costs only its own part: the rest is returned, with the failure beside it, instead of the whole read
 * failing because one consent expired.
 */
export async function fromEveryConnection<T>(
  connections: readonly BankConnectionRecord[],
  load: (connection: BankConnectionRecord) => Promise<T[]>,
): Promise<FromEveryConnection<T>> {
  const failures: ConnectionFailure[] = [];
  const active = connections.filter((connection) => connection.status === 'active');
  const parts = await Promise.all(
    active.map((connection) =>
      load(connection).catch((error: unknown) => {
        failures.push({ connection, error });
        return [] as T[];
      }),
    ),
  );
  return { items: parts.flat(), failures };
}
