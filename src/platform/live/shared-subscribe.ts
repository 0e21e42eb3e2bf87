import { createSourceEventStream, execute, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { OperationContext } from '../graphql/operation-context';
import { describePrincipal } from '../graphql/operation-context';
import { LRUCache } from 'lru-cache';
import { attachValueSink } from './live-stream';
import { SharedNext } from './next-frame';

type PromiseOrValue<T> = T | Promise<T>;

/**
 * graphql-js's `subscribe`, except that an event object is executed once per distinct operation (document,
 * operation name, variables, principal) and the result shared by every subscriber of that operation. Thousands of
 * merchant screens watching one payment's refunds otherwise execute the same selection on the same event once each.
 *
 * Sound because the streams hand every subscriber the same object for the same event (see `sharedMapping`), and
 * the subscription payload types resolve from that object alone: what a principal may see was decided when it
 * subscribed, and the principal is part of the key all the same.
 */
export async function sharedSubscribe(args: ExecutionArgs): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
  const stream = await createSourceEventStream(args);
  if (!isAsyncIterable(stream)) return stream as ExecutionResult;
  const key = operationKey(args);
  const deliver = typeof args.contextValue === 'object' && args.contextValue !== null ? directDeliveries.get(args.contextValue) : undefined;
  const sharedOf = (event: object): SharedExecution => {
    let byOperation = executions.get(event);
    if (!byOperation) executions.set(event, (byOperation = new Map()));
    let shared = byOperation.get(key);
    if (!shared) byOperation.set(key, (shared = new SharedExecution(execute({ ...args, rootValue: event }))));
    return shared;
  };
  if (deliver) {
    // The fan-out's fast path: an event's shared result is written from the bus's delivery loop, or, while it is
    // still executing, from one callback per operation when it is ready; no promise per subscriber. A result with
    // errors is declined and takes the iterator below.
    const deliverResult = (result: ExecutionResult | undefined): boolean => {
      if (result === undefined || result.errors) return false;
      try {
        return deliver(sharedNextOf(result));
      } catch {
        // Declined: the iterator's path sends it again through graphql-ws, which reports what fails.
        return false;
      }
    };
    attachValueSink(stream, (event, done) => {
      if (typeof event !== 'object' || event === null) return false;
      const shared = sharedOf(event);
      if (shared.settled) return deliverResult(shared.result);
      shared.whenSettled(() => done(deliverResult(shared.result)));
      return undefined;
    });
  }
  return new MappedStream(stream as AsyncIterableIterator<unknown>, deliver, async (event) => {
    if (typeof event !== 'object' || event === null) return execute({ ...args, rootValue: event });
    return sharedOf(event).promise;
  });
}

/** Per event object; dropped with it. */
const executions = new WeakMap<object, Map<string, SharedExecution>>();

/** One execution of an event for one operation, shared by all its subscribers. */
class SharedExecution {
  /** Set once settled: the result, or undefined when the execution threw. */
  result: ExecutionResult | undefined;
  settled = false;
  readonly promise: Promise<ExecutionResult>;
  private waiters: (() => void)[] | undefined;

  constructor(execution: PromiseOrValue<ExecutionResult>) {
    if (!isPromise(execution)) {
      this.result = execution;
      this.settled = true;
      this.promise = Promise.resolve(execution);
      return;
    }
    this.promise = execution;
    const settle = (result: ExecutionResult | undefined): void => {
      this.result = result;
      this.settled = true;
      const waiters = this.waiters ?? [];
      this.waiters = undefined;
      for (const waiter of waiters) waiter();
    };
    // The iterator path awaits `promise` itself (and sees a rejection); here a rejection only means "not delivered".
    execution.then(settle, () => settle(undefined));
  }

  /** Runs `waiter` once the execution has settled; call only while it has not. */
  whenSettled(waiter: () => void): void {
    (this.waiters ??= []).push(waiter);
  }
}

/**
 * Writes one `next` message, given the shared result, straight to the subscriber's socket; false when it could
 * not (the socket is closing), and the result then goes the ordinary way.
 */
export type DirectDelivery = (payload: SharedNext) => boolean;

/** Keyed by the operation's context value, which graphql-ws creates for each subscribe message. */
const directDeliveries = new WeakMap<object, DirectDelivery>();

/**
 * Lets an operation's error-free results bypass graphql-ws's per-subscriber path (its hooks, message object and
 * JSON.stringify): the shared result is serialised once for all subscribers of the operation, and each socket is
 * written the same bytes but for its own operation id. Results with errors still go through graphql-ws, so they are
 * masked, logged and tagged with the request id as before.
 */
export function deliverDirectly(contextValue: object, deliver: DirectDelivery): void {
  directDeliveries.set(contextValue, deliver);
}

/** One serialisation per shared result. */
const sharedNexts = new WeakMap<ExecutionResult, SharedNext>();

function sharedNextOf(result: ExecutionResult): SharedNext {
  let shared = sharedNexts.get(result);
  if (shared === undefined) sharedNexts.set(result, (shared = new SharedNext(JSON.stringify(result))));
  return shared;
}

function operationKey(args: ExecutionArgs): string {
  const principal = (args.contextValue as OperationContext | undefined)?.principal;
  const key = [
    args.document.loc?.source.body ?? JSON.stringify(args.document),
    args.operationName ?? '',
    JSON.stringify(args.variableValues ?? {}),
    principal ? describePrincipal(principal) : '',
  ].join('\u0000');
  // Each subscriber keeps its key for its lifetime, and thousands share the same one: one copy of it for all.
  let shared = sharedKeys.get(key);
  if (shared === undefined) sharedKeys.set(key, (shared = key));
  return shared;
}

const sharedKeys = new LRUCache<string, string>({ max: 1_000 });

/**
 * One mapped value per source object: the streams pass an event's shared payload through this, so all their
 * subscribers see one object for one event (and `sharedSubscribe` can share its execution).
 */
export function sharedMapping<T>(map: (payload: object) => T | undefined): (payload: unknown) => T | undefined {
  const mapped = new WeakMap<object, { value: T | undefined }>();
  return (payload) => {
    if (typeof payload !== 'object' || payload === null) return undefined;
    let entry = mapped.get(payload);
    if (!entry) mapped.set(payload, (entry = { value: map(payload) }));
    return entry.value;
  };
}

function isPromise<T>(value: PromiseOrValue<T>): value is Promise<T> {
  return typeof (value as { then?: unknown }).then === 'function';
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * Maps an async iterator, passing `return` (unsubscribe) through to the source so its listener is removed.
 * Error-free results are handed to `deliver` when there is one, and the iterator goes on to the next event.
 * A class, so that an idle subscriber holds a few fields rather than its own set of closures.
 */
class MappedStream<T> implements AsyncIterableIterator<ExecutionResult> {
  constructor(
    private readonly source: AsyncIterableIterator<T>,
    private readonly deliver: DirectDelivery | undefined,
    private readonly map: (value: T) => Promise<ExecutionResult>,
  ) {}

  async next(): Promise<IteratorResult<ExecutionResult>> {
    for (;;) {
      const next = await this.source.next();
      if (next.done) return { value: undefined, done: true };
      let result: ExecutionResult;
      try {
        result = await this.map(next.value);
      } catch (error) {
        await this.return();
        throw error;
      }
      if (this.deliver && !result.errors && this.deliver(sharedNextOf(result))) continue;
      return { value: result, done: false };
    }
  }

  async return(): Promise<IteratorResult<ExecutionResult>> {
    await this.source.return?.();
    return { value: undefined, done: true };
  }

  async throw(error?: unknown): Promise<IteratorResult<ExecutionResult>> {
    await this.return();
    throw error;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<ExecutionResult> {
    return this;
  }
}
