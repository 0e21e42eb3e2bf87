import { GraphQLObjectType, GraphQLSchema, GraphQLString, parse, type ExecutionResult } from 'graphql';
import { AsyncQueue } from '../../../src/subscriptions/async-queue';
import { deliverDirectly, sharedMapping, sharedSubscribe } from '../../../src/subscriptions/shared-subscribe';

/** A schema whose subscription field streams whatever a test pushes, and counts how often `status` resolves. */
function harness() {
  const sources: AsyncQueue<object>[] = [];
  let resolved = 0;
  const Refund = new GraphQLObjectType({
    name: 'Refund',
    fields: {
      status: {
        type: GraphQLString,
        resolve: (refund: { status: string }) => {
          resolved += 1;
          if (refund.status === 'broken') throw new Error('unreadable refund');
          return refund.status;
        },
      },
    },
  });
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLString } } }),
    subscription: new GraphQLObjectType({
      name: 'Subscription',
      fields: {
        refundUpdated: {
          type: Refund,
          args: { id: { type: GraphQLString } },
          subscribe: () => {
            const queue = new AsyncQueue<object>();
            sources.push(queue);
            return queue;
          },
          resolve: (event: object) => event,
        },
      },
    }),
  });
  const subscribe = async (id: string, contextValue: object = {}) =>
    (await sharedSubscribe({
      schema,
      document: parse('subscription S($id: String) { refundUpdated(id: $id) { status } }'),
      variableValues: { id },
      contextValue,
    })) as AsyncIterableIterator<ExecutionResult>;
  return { sources, subscribe, resolvedCount: () => resolved };
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
    contexts.forEach((context, i) => deliverDirectly(context, (json) => written[i]!.push(json) > 0));
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
