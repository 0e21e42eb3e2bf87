import { GraphQLError } from 'graphql';
import { createOperationContext, scopedKey, type OperationContext } from '../../src/platform/graphql/operation-context';
import { createLogger } from '../../src/platform/observability/logger';
import { fromEveryConnection } from '../../src/accounts/every-connection';
import type { BankConnectionRecord } from '../../src/identity';

function context(): OperationContext {
  return createOperationContext({
    principal: { kind: 'user', userId: 'u1' },
    requestId: 'r1',
    logger: createLogger('silent'),
    cacheMode: 'use',
  });
}

/** Apollo hands resolvers and plugins a shallow copy of the context, with its prototype. */
function apolloCopy<T extends object>(original: T): T {
  return Object.assign(Object.create(Object.getPrototypeOf(original) as object) as T, original);
}

describe('the operation context', () => {
  it('keeps one value per scoped key for the operation, shared with its copies', () => {
    const original = context();
    const copy = apolloCopy(original);
    const key = scopedKey<{ made: number }>('counter');
    let made = 0;
    const first = copy.scoped(key, () => ({ made: ++made }));
    expect(original.scoped(key, () => ({ made: ++made }))).toBe(first);
    expect(made).toBe(1);
    expect(original.scoped(scopedKey<{ made: number }>('counter'), () => ({ made: ++made }))).not.toBe(first);
  });

  it('is as fresh as its stalest read, and not fresh at all when it read nothing or a read failed', () => {
    const original = context();
    expect(original.dataFreshUntilMs()).toBe(0);
    const copy = apolloCopy(original);
    copy.noteDataRead(2_000);
    copy.noteDataRead(1_000);
    expect(original.dataFreshUntilMs()).toBe(1_000);
    copy.noteDataRead(0);
    expect(original.dataFreshUntilMs()).toBe(0);
  });

  it('keeps a partial failure for the answer and stops the answer from being kept', () => {
    const original = context();
    original.answer.cacheable = true;
    apolloCopy(original).reportPartialFailure({ path: ['viewer', 'accounts'], error: new GraphQLError('bank down') });
    expect(original.partialFailures.map((failure) => failure.path)).toEqual([['viewer', 'accounts']]);
    expect(original.answer.cacheable).toBe(false);
  });

  it('passes its request id and deadline to provider calls', () => {
    const made = context();
    const deadline = { at: 1, signal: () => new AbortController().signal, cancel: () => undefined };
    made.deadline = deadline;
    expect(made.callOptions()).toEqual({ requestId: 'r1', deadline });
  });
});

describe('reading every bank connection', () => {
  const connection = (id: string, status: BankConnectionRecord['status'] = 'active'): BankConnectionRecord => ({
    id,
    userId: 'u1',
    providerId: `ob-${id}`,
    status,
    createdAtMs: 0,
  });

  it('answers with what the active connections gave and returns each failure beside it', async () => {
    const failure = new Error('consent expired');
    const read = await fromEveryConnection([connection('a'), connection('b'), connection('c', 'expired')], async ({ id }) => {
      if (id === 'b') throw failure;
      return [id];
    });
    expect(read.items).toEqual(['a']);
    expect(read.failures).toEqual([{ connection: connection('b'), error: failure }]);
  });
});
