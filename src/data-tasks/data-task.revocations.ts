import type { IdentityEvents } from '../identity';
import type { Logger } from '../platform/observability/logger';
import type { DataTaskStore } from './data-task.store';

/**
 * Deletes the data tasks (and stored results) of a disconnected bank connection or a revoked user as soon as the
 * revocation is announced, on every instance: the mutation that revoked already deleted them, this catches every
 * other path that announces one. Reads check the connection too (data-task.store.ts), so a deletion that lost a
 * race with a task being stored still serves nothing, and the reconciler sweeps what is left.
 */
export function forgetDataTasksOnRevocation(events: IdentityEvents, dataTasks: DataTaskStore, logger: Logger): Promise<() => Promise<void>> {
  return events.listen((event) => {
    const forgetting =
      event.kind === 'disconnected'
        ? dataTasks.forgetConnection(event.connectionId)
        : event.kind === 'user-revoked'
          ? dataTasks.forgetUser(event.userId)
          : undefined;
    forgetting?.catch((error: unknown) =>
      logger.warn({ err: error, principal: event.userId, reason: event.kind }, 'data tasks of a revoked connection not deleted yet; the reconciler will'),
    );
  });
}
