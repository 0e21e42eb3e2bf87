import { createSourceEventStream, execute, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { GatewayContext } from '../context';
import { describePrincipal } from '../context';
import { BoundedMap } from '../store/bounded-map';

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
  return mapStream(stream as AsyncIterableIterator<unknown>, deliver, (event) => {
    if (typeof event !== 'object' || event === null) return execute({ ...args, rootValue: event }) as Promise<ExecutionResult>;
    let byOperation = results.get(event);
    if (!byOperation) results.set(event, (byOperation = new Map()));
    let result = byOperation.get(key);
    if (!result) byOperation.set(key, (result = Promise.resolve(execute({ ...args, rootValue: event }))));
    return result;
  });
}

/** Per event object; dropped with it. */
const results = new WeakMap<object, Map<string, Promise<ExecutionResult>>>();

/**
 * Writes one `next` message, given the result's JSON, straight to the subscriber's socket; false when it could not
 * (the socket is closing), and the result then goes the ordinary way.
 */
export type DirectDelivery = (payloadJson: string) => boolean;

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
const resultJson = new WeakMap<ExecutionResult, string>();

function jsonOfResult(result: ExecutionResult): string {
  let json = resultJson.get(result);
  if (json === undefined) resultJson.set(result, (json = JSON.stringify(result)));
  return json;
}

function operationKey(args: ExecutionArgs): string {
  const principal = (args.contextValue as GatewayContext | undefined)?.principal;
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

const sharedKeys = new BoundedMap<string, string>(1_000);

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

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * Maps an async iterator, passing `return` (unsubscribe) through to the source so its listener is removed.
 * Error-free results are handed to `deliver` when there is one, and the iterator goes on to the next event.
 * A class, so that an idle subscriber holds a few fields rather than its own set of closures.
 */
function mapStream<T>(
  source: AsyncIterableIterator<T>,
  deliver: DirectDelivery | undefined,
  map: (value: T) => Promise<ExecutionResult>,
): AsyncIterableIterator<ExecutionResult> {
  return new MappedStream(source, deliver, map);
}

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
      if (this.deliver && !result.errors && this.deliver(jsonOfResult(result))) continue;
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
