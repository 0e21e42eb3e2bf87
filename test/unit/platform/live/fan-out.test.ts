import { GraphQLObjectType, GraphQLSchema, GraphQLString, parse, type ExecutionResult } from 'graphql';
import { loadConfig } from '../../../../src/platform/config/config';
import { AsyncQueue } from '../../../../src/platform/live/async-queue';
import { FAST_FAN_OUT, fanOutFor, ORDINARY_FAN_OUT, type FanOut } from '../../../../src/platform/live/fan-out';

/** A subscription field streaming what a test pushes, counting how often its result's `status` resolves. */
function harness(fanOut: FanOut) {
  const sources: AsyncQueue<object>[] = [];
  let resolved = 0;
  const Refund = new GraphQLObjectType({
    name: 'Refund',
    fields: {
      status: {
        type: GraphQLString,
        resolve: (refund: { status: string }) => {
          resolved += 1;
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
  const delivered: string[] = [];
  const subscribe = async () => {
    const contextValue = {};
    fanOut.deliverDirectly(contextValue, (shared) => delivered.push(shared.json) > 0);
    return (await fanOut.subscribe({
      schema,
      document: parse('subscription { refundUpdated { status } }'),
      contextValue,
    })) as AsyncIterableIterator<ExecutionResult>;
  };
  return { sources, subscribe, delivered, resolvedCount: () => resolved };
}

describe('the fan-out seam', () => {
  it('FAST_PATHS chooses it: on (the default) the fast paths, off the ordinary path; anything else is refused', () => {
    expect(loadConfig({}).server.fastPaths).toBe(true);
    expect(loadConfig({ FAST_PATHS: 'off' }).server.fastPaths).toBe(false);
    expect(fanOutFor(true)).toBe(FAST_FAN_OUT);
    expect(fanOutFor(false)).toBe(ORDINARY_FAN_OUT);
    expect(() => loadConfig({ FAST_PATHS: 'no' })).toThrow(/FAST_PATHS/);
  });

  it('the ordinary path: every subscriber executes the event itself and gets its result from its own iterator', async () => {
    const { sources, subscribe, delivered, resolvedCount } = harness(ORDINARY_FAN_OUT);
    const streams = [await subscribe(), await subscribe()];
    const event = { status: 'executed' };
    for (const source of sources) source.push(event);
    for (const stream of streams) expect((await stream.next()).value).toEqual({ data: { refundUpdated: { status: 'executed' } } });
    expect(resolvedCount()).toBe(2);
    expect(delivered).toEqual([]);
    expect(ORDINARY_FAN_OUT.writeText({} as never, '{"type":"connection_ack"}')).toBe(false);
  });

  it('the fast path: the event executed once for both, each result handed to its direct delivery', async () => {
    const { sources, subscribe, delivered, resolvedCount } = harness(FAST_FAN_OUT);
    const streams = [await subscribe(), await subscribe()];
    const pending = streams.map((stream) => stream.next());
    const event = { status: 'executed' };
    for (const source of sources) source.push(event);
    for (const source of sources) await source.return();
    for (const next of pending) expect((await next).done).toBe(true);
    expect(resolvedCount()).toBe(1);
    expect(delivered).toEqual(['{"data":{"refundUpdated":{"status":"executed"}}}', '{"data":{"refundUpdated":{"status":"executed"}}}']);
  });
});
