import { AsyncLocalStorage } from 'node:async_hooks';
import { setMaxListeners } from 'node:events';

/**
 * Every GraphQL operation has a deadline (OPERATION_TIMEOUT_MS): the provider calls its resolvers make, their
 * retries and backoff included, spend only what is left of it. It travels in AsyncLocalStorage rather than through
 * every client's options, so no call site can forget it; a call made outside an operation (a webhook, a watcher)
 * has none and keeps the per-request HTTP timeouts only.
 */
export interface OperationDeadline {
  /** performance.now() milliseconds. */
  readonly at: number;
  /** Aborts when the deadline passes; one per operation, made on the first provider call that needs it. */
  signal(): AbortSignal;
}

const deadlines = new AsyncLocalStorage<OperationDeadline>();

/** Runs `operation` with a deadline `timeoutMs` from now. */
export function withOperationDeadline<T>(timeoutMs: number, operation: () => T): T {
  const at = performance.now() + timeoutMs;
  let signal: AbortSignal | undefined;
  return deadlines.run({ at, signal: () => (signal ??= deadlineSignal(at)) }, operation);
}

function deadlineSignal(at: number): AbortSignal {
  const signal = AbortSignal.timeout(Math.max(1, Math.ceil(at - performance.now())));
  // Every provider call of the operation listens on it at once (a 50-account query makes 100), each removing its
  // listener when it ends: many listeners here are the design, not a leak (Node warns past 10).
  setMaxListeners(0, signal);
  return signal;
}

/** The current operation's deadline, if there is one. */
export function operationDeadline(): OperationDeadline | undefined {
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
