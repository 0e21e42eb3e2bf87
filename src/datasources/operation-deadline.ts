import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Every GraphQL operation has a deadline (OPERATION_TIMEOUT_MS): the provider calls its resolvers make, their
 * retries and backoff included, spend only what is left of it. It travels in AsyncLocalStorage rather than through
 * every client's options, so no call site can forget it; a call made outside an operation (a webhook, a watcher)
 * has none and keeps the per-request HTTP timeouts only.
 */
const deadlines = new AsyncLocalStorage<number>();

/** Runs `operation` with a deadline `timeoutMs` from now (performance.now() milliseconds). */
export function withOperationDeadline<T>(timeoutMs: number, operation: () => T): T {
  return deadlines.run(performance.now() + timeoutMs, operation);
}

/** The current operation's deadline in performance.now() milliseconds, if there is one. */
export function operationDeadline(): number | undefined {
  return deadlines.getStore();
}

/** The cause of a provider call cut short by its operation's deadline; `code` lets the error mapping call it a timeout. */
export class OperationDeadlineError extends Error {
  override readonly name = 'OperationDeadlineError';
  readonly code = 'OPERATION_DEADLINE';

  constructor() {
    super('the operation deadline (OPERATION_TIMEOUT_MS) passed before the provider answered');
  }
}
