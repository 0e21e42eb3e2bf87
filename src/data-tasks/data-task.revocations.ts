import type { Logger } from '../platform/observability/logger';
import type { DataTaskService } from './data-task.service';

/** The revocations this listens to (identity's IdentityEvents announces them on every instance). */
export interface RevocationEvents {
  listen(handler: (event: { kind: string; userId: string; connectionId?: string }) => void): Promise<() => Promise<void>>;
}

/**
 * Deletes the data tasks (and stored results) of a disconnected bank connection or a revoked user as soon as the
 * revocation is announced, on every instance: the mutation that revoked already deleted them, this catches every
 * other path that announces one. Reads check the connection too (data-task.store.ts), so a deletion that lost a
 * race with a task being stored still serves nothing, and the data-task pass sweeps what is left.
 */
export function forgetDataTasksOnRevocation(events: RevocationEvents, dataTasks: DataTaskService, logger: Logger): Promise<() => Promise<void>> {
  return events.listen((event) => {
    const forgetting =
      event.kind === 'disconnected' && event.connectionId !== undefined
        ? dataTasks.forgetConnection(event.connectionId)
        : event.kind === 'user-revoked'
          ? dataTasks.forgetUser(event.userId)
          : undefined;
    forgetting?.catch((error: unknown) =>
      logger.warn({ err: error, principal: event.userId, reason: event.kind }, 'data tasks of a revoked connection not deleted yet; the reconciler will'),
    );
  });
}
