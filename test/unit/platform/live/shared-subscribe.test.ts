import { GraphQLObjectType, GraphQLSchema, GraphQLString, parse, type ExecutionResult } from 'graphql';
import { createLogger } from '../../../../src/platform/observability/logger';
import { AsyncQueue } from '../../../../src/platform/live/async-queue';
import { MemoryEventBus } from '../../../../src/platform/live/event-bus';
import { liveStream } from '../../../../src/platform/live/live-stream';
import { deliverDirectly, sharedMapping, sharedSubscribe } from '../../../../src/platform/live/shared-subscribe';

/**
 * Subscription.refundUpdated over `subscribe`, counting how often Refund.status resolves (a "broken" refund throws;
 * `asyncResolver` resolves it through a promise).
 */
function refundSchema(subscribe: () => unknown, asyncResolver = false): { schema: GraphQLSchema; resolvedCount: () => number } {
  let resolved = 0;
  const Refund = new GraphQLObjectType({
    name: 'Refund',
    fields: {
      status: {
        type: GraphQLString,
        resolve: (refund: { status: string }) => {
          resolved += 1;
          if (refund.status === 'broken') throw new Error('unreadable refund');
          return asyncResolver ? Promise.resolve(refund.status) : refund.status;
        },
      },
    },
  });
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLString } } }),
    subscription: new GraphQLObjectType({
      name: 'Subscription',
      fields: {
        refundUpdated: { type: Refund, args: { id: { type: GraphQLString } }, subscribe, resolve: (event: object) => event },
      },
    }),
  });
  return { schema, resolvedCount: () => resolved };
}

/** A schema whose subscription field streams whatever a test pushes, and counts how often `status` resolves. */
function harness() {
  const sources: AsyncQueue<object>[] = [];
  const { schema, resolvedCount } = refundSchema(() => {
    const queue = new AsyncQueue<object>();
    sources.push(queue);
    return queue;
  });
  const subscribe = async (id: string, contextValue: object = {}) =>
    (await sharedSubscribe({
      schema,
      document: parse('subscription S($id: String) { refundUpdated(id: $id) { status } }'),
      variableValues: { id },
      contextValue,
    })) as AsyncIterableIterator<ExecutionResult>;
  return { sources, subscribe, resolvedCount };
}

describe('sharedSubscribe', () => {
  it('executes one event once for every subscriber of the same operation, and again for other variables', async () => {
    const { sources, subscribe, resolvedCount } = harness();
    const streams = [await subscribe('a'), await subscribe('a'), await subscribe('a'), await subscribe('b')];
    const event = { status: 'executed' };
    for (const source of sources) source.push(event);
    const results = await Promise.all(streams.map((stream) => stream.next()));
    for (const result of results) expect(result.value).toEqual({ data: { refundUpdated: { status: 'executed' } } });
    expect(resolvedCount()).toBe(2);
  });

  it('hands error-free results to direct delivery as JSON serialised once, and yields results with errors', async () => {
    const { sources, subscribe } = harness();
    const written: string[][] = [[], []];
    const contexts = [{}, {}];
    const serialise = jest.spyOn(JSON, 'stringify');
    contexts.forEach((context, i) => deliverDirectly(context, (shared) => written[i]!.push(shared.json) > 0));
    const streams = [await subscribe('a', contexts[0]), await subscribe('a', contexts[1])];
    const pending = streams.map((stream) => stream.next());
    const executed = { status: 'executed' };
    const broken = { status: 'broken' };
    for (const source of sources) {
      source.push(executed);
      source.push(broken);
    }
    const results = await Promise.all(pending);
    const calls = serialise.mock.calls.filter(([value]) => value !== null && typeof value === 'object' && 'data' in value).length;
    serialise.mockRestore();
    expect(written).toEqual([['{"data":{"refundUpdated":{"status":"executed"}}}'], ['{"data":{"refundUpdated":{"status":"executed"}}}']]);
    expect(calls).toBe(1);
    for (const result of results) expect(result.value?.errors?.[0]?.message).toBe('unreadable refund');
  });

  it('passes an unsubscribe through to the source stream', async () => {
    const { sources, subscribe } = harness();
    const stream = await subscribe('a');
    await stream.return!();
    expect(sources[0]!.isDone).toBe(true);
  });
});

describe('sharedSubscribe over live streams (the fan-out’s fast path)', () => {
  /** Subscribers of one live stream topic; `status` resolves synchronously or through a promise. */
  function liveHarness(asyncResolver: boolean) {
    const bus = new MemoryEventBus(createLogger('silent'));
    const { schema, resolvedCount } = refundSchema(
      () =>
        liveStream<{ id: string; status: string }>({
          bus,
          topic: 'refunds',
          current: async () => [],
          fromEvent: (payload) => payload as { id: string; status: string },
          identity: (refund) => refund.id,
          rank: () => 0,
          logs: { logger: createLogger('silent') },
        }),
      asyncResolver,
    );
    const subscribe = async (written: string[]) => {
      const contextValue = {};
      deliverDirectly(contextValue, (shared) => written.push(shared.json) > 0);
      return (await sharedSubscribe({
        schema,
        document: parse('subscription { refundUpdated { status } }'),
        contextValue,
      })) as AsyncIterableIterator<ExecutionResult>;
    };
    return { bus, subscribe, resolvedCount };
  }

  it.each([false, true])('writes each event to every subscriber without their iterators, executing it once (async resolver: %s)', async (asyncResolver) => {
    const { bus, subscribe, resolvedCount } = liveHarness(asyncResolver);
    const written: string[][] = [[], [], []];
    const streams = await Promise.all(written.map((into) => subscribe(into)));
    const pending = streams.map((stream) => stream.next());
    await bus.publish('refunds', { id: 'r1', status: 'executed' });
    await bus.publish('refunds', { id: 'r2', status: 'failed' });
    // Resolver promises settle in microtasks; the fast path writes when they have.
    await new Promise((resolve) => setImmediate(resolve));
    for (const into of written) expect(into).toEqual(['{"data":{"refundUpdated":{"status":"executed"}}}', '{"data":{"refundUpdated":{"status":"failed"}}}']);
    expect(resolvedCount()).toBe(2);

    // A result with errors is declined by the fast path and yielded by each iterator, to go through graphql-ws's hooks.
    await bus.publish('refunds', { id: 'r3', status: 'broken' });
    for (const result of await Promise.all(pending)) expect(result.value?.errors?.[0]?.message).toBe('unreadable refund');
    for (const stream of streams) await stream.return!();
  });

  it('writes from within the bus’s delivery call when the result is ready (no tick per subscriber)', async () => {
    const { bus, subscribe } = liveHarness(false);
    const handlers: ((payload: unknown) => void)[] = [];
    jest.spyOn(bus, 'listen').mockImplementation(async (_topic, handler) => {
      handlers.push(handler);
      return async () => undefined;
    });
    const written: string[] = [];
    const stream = await subscribe(written);
    void stream.next();
    await new Promise((resolve) => setImmediate(resolve));
    handlers[0]!(Object.freeze({ id: 'r1', status: 'executed' }));
    expect(written).toEqual(['{"data":{"refundUpdated":{"status":"executed"}}}']);
    await stream.return!();
  });
});

describe('sharedMapping', () => {
  it('maps one payload object to one value, whoever asks', () => {
    let calls = 0;
    const map = sharedMapping((payload) => ({ ...payload, calls: ++calls }));
    const payload = { id: 1 };
    expect(map(payload)).toBe(map(payload));
    expect(map({ id: 1 })).not.toBe(map(payload));
    expect(map(null)).toBeUndefined();
  });
});
