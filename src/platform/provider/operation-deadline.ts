import { setMaxListeners } from 'node:events';

/**
 * Every GraphQL operation has a deadline (OPERATION_TIMEOUT_MS): the provider calls its resolvers make, their
 * retries and backoff included, spend only what is left of it. It travels in the operation's context
 * (`OperationContext.callOptions()`, which every provider call made for a resolver takes its CallOptions from), not
 * in AsyncLocalStorage: on Node 20 an AsyncLocalStorage in use installs promise hooks, and then every promise of
 * every request pays for them. A call made outside an operation (a webhook, a watcher) has none and keeps the
 * per-request HTTP timeouts only.
 */
export interface OperationDeadline {
  /** performance.now() milliseconds. */
  readonly at: number;
  /** Aborts when the deadline passes or the operation is cancelled; one per operation, made on the first provider call that needs it. */
  signal(): AbortSignal;
  /** Ends the operation's provider calls before the deadline: nobody is left to read what they would answer. */
  cancel(): void;
}

/** A deadline `timeoutMs` from now. */
export function operationDeadline(timeoutMs: number): OperationDeadline {
  const at = performance.now() + timeoutMs;
  let controller: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  const control = (): AbortController => {
    if (controller) return controller;
    controller = new AbortController();
    // Every provider call of the operation listens on it at once (a 50-account query makes 100), each removing its
    // listener when it ends: many listeners here are the design, not a leak (Node warns past 10).
    setMaxListeners(0, controller.signal);
    return controller;
  };
  return {
    at,
    signal: () => {
      const aborter = control();
      // A timer rather than AbortSignal.timeout inside AbortSignal.any: on Node 20 garbage collection can take that
      // timeout signal, and the deadline then never fires.
      if (timer === undefined && !aborter.signal.aborted) {
        timer = setTimeout(() => aborter.abort(new OperationDeadlineError()), Math.max(1, Math.ceil(at - performance.now()))).unref();
      }
      return aborter.signal;
    },
    cancel: () => {
      clearTimeout(timer);
      control().abort(new OperationDeadlineError());
    },
  };
}

/** The cause of a provider call cut short by its operation's deadline; `code` lets the error mapping call it a timeout. */
export class OperationDeadlineError extends Error {
  override readonly name = 'OperationDeadlineError';
  readonly code = 'OPERATION_DEADLINE';

  constructor() {
    super('the operation deadline (OPERATION_TIMEOUT_MS) passed before the provider answered');
  }
}
