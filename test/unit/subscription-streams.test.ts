import { parse, subscribe, type ExecutionResult } from 'graphql';
import { buildAppSchema } from '../../src/app/schema';
import type { SubscriptionStream } from '../../src/platform/graphql/build-schema';

/** A stream whose one event names the arguments and the context it was called with. */
const echoStream: SubscriptionStream<{ caller: string }> = async (args, context) =>
  (async function* () {
    yield { refundId: `${String(Object.values(args)[0])} for ${context.caller}` };
  })();

const STREAMS = { payoutUpdated: echoStream, refundUpdated: echoStream, dataTaskUpdated: echoStream };

describe('subscription streams handed to the schema', () => {
  it("runs each Subscription field's stream with the field's arguments and the operation's context", async () => {
    const schema = await buildAppSchema<{ caller: string }>({ streams: STREAMS });
    const events = (await subscribe({
      schema,
      document: parse('subscription { refundUpdated(paymentId: "p-1") { refundId } }'),
      contextValue: { caller: 'merchant-1' },
    })) as AsyncIterableIterator<ExecutionResult>;
    const first = await events.next();
    expect(first.value).toEqual({ data: { refundUpdated: { refundId: 'p-1 for merchant-1' } } });
  });

  it('stops start-up when a Subscription field has no stream, or a stream names no field', async () => {
    const { dataTaskUpdated: _left, ...missing } = STREAMS;
    await expect(buildAppSchema({ streams: missing })).rejects.toThrow('Subscription.dataTaskUpdated was given no stream');
    await expect(buildAppSchema({ streams: { ...STREAMS, payoutChanged: echoStream } })).rejects.toThrow(
      'a stream was given for Subscription.payoutChanged, which the schema does not have',
    );
  });

  it("refuses to subscribe on a schema built without the gateway's streams (printing only)", async () => {
    const schema = await buildAppSchema();
    const result = (await subscribe({ schema, document: parse('subscription { payoutUpdated(transactionId: "t-1") { status } }') })) as ExecutionResult;
    expect(result.errors?.[0]?.message).toBe(
      "Subscription.payoutUpdated has no stream: this schema was built without the gateway's streams (buildGatewaySchema's streams)",
    );
  });
});
