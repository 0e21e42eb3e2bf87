import { createSourceEventStream, execute, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { GatewayContext } from '../context';
import { describePrincipal } from '../context';

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
  return mapStream(stream as AsyncIterableIterator<unknown>, (event) => {
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

function operationKey(args: ExecutionArgs): string {
  const principal = (args.contextValue as GatewayContext | undefined)?.principal;
  return [
    args.document.loc?.source.body ?? JSON.stringify(args.document),
    args.operationName ?? '',
    JSON.stringify(args.variableValues ?? {}),
    principal ? describePrincipal(principal) : '',
  ].join('\u0000');
}

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

/** Maps an async iterator, passing `return` (unsubscribe) through to the source so its listener is removed. */
function mapStream<T, U>(source: AsyncIterableIterator<T>, map: (value: T) => Promise<U>): AsyncIterableIterator<U> {
  const close = async (): Promise<IteratorResult<U>> => {
    await source.return?.();
    return { value: undefined, done: true };
  };
  const iterator: AsyncIterableIterator<U> = {
    async next() {
      const next = await source.next();
      if (next.done) return { value: undefined, done: true };
      try {
        return { value: await map(next.value), done: false };
      } catch (error) {
        await close();
        throw error;
      }
    },
    return: close,
    async throw(error?: unknown) {
      await close();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
