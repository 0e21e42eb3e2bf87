import type { OperationContext } from './operation-context';

/**
 * `extensions.idempotentReplay: true` on an answer: a mutation answered an object it had recorded earlier under
 * the same idempotency key (createPayout's transactionId, refundPayment's idempotencyKey) instead of making one.
 */
export const IDEMPOTENT_REPLAY = 'idempotentReplay';

/** Says in the answer of `context`'s operation that its object was made by an earlier request under the same key. */
export function noteIdempotentReplay(context: OperationContext): void {
  context.extensions[IDEMPOTENT_REPLAY] = true;
}

/** `result` with the extensions its operation's resolvers noted (the same object when they noted none). */
export function withAnswerExtensions<R extends { extensions?: Record<string, unknown> }>(result: R, context: OperationContext | undefined): R {
  if (!context || Object.keys(context.extensions).length === 0) return result;
  return { ...result, extensions: { ...result.extensions, ...context.extensions } };
}
