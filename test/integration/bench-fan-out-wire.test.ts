import type { Fixtures } from '../../src/sandbox/fixtures/types';
import { messageBytes } from '../../bench/lib/fan-out-wire';
import type { BenchSubscription } from '../../bench/lib/graphql-ws-socket';
import { subscribe, TRANSPORTS, type Transport } from '../../bench/lib/subscribers';
import { dataOf, fixtures, paymentsIn, type RefundView } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';

/*
 * Scenario 9 compares bankgraph's CPU per delivered message with a floor that writes, per transport, the bytes
 * bankgraph writes for one result (bench/lib/fan-out-wire.ts). Here the bench's own subscriber clients subscribe to
 * bankgraph over each transport, and what their socket read for a pushed refund is compared with the floor's
 * bytes for the same result. Sandbox time runs at 1/1000 of real time: the refund moves when its payment settles.
 */

// As the bench asks (bench/scenarios/subscriptions.ts): the provider's refund id, in the mutation's answer and in every push.
const REFUND_PAYMENT = 'mutation Refund($input: RefundPaymentInput!) { refundPayment(input: $input) { id: refundId status } }';
const REFUND_UPDATED =
  'subscription Refunds($paymentId: ID!, $refundId: ID) { refundUpdated(paymentId: $paymentId, refundId: $refundId) { id: refundId status } }';

describe('the fan-out floor writes what bankgraph writes', () => {
  let stack: Stack;
  let seeded: Fixtures;
  const open: BenchSubscription[] = [];

  beforeAll(async () => {
    stack = await startStack({
      env: { SANDBOX_TIME_SCALE: '0.001' },
      gateway: { live: { refundWatch: { initialDelayMs: 50, maxDelayMs: 200, factor: 2, leaseTtlMs: 1_000 } } },
    });
    seeded = await fixtures(stack);
  });

  afterEach(async () => {
    await Promise.all(open.splice(0).map((subscription) => subscription.close()));
  });

  afterAll(async () => {
    await stack?.close();
  });

  function endpoint(transport: Transport): string {
    const http = stack.gateway.url;
    if (transport === 'ws') return `${http.replace(/^http/, 'ws')}/graphql`;
    return transport === 'sse' ? `${http}/graphql/stream` : `${http}/graphql`;
  }

  it.each(TRANSPORTS.map((transport, index) => [transport, index] as const))('over %s', async (transport, index) => {
    const payment = paymentsIn(seeded, 'authorized', TRANSPORTS.length)[index]!;
    const input = { paymentId: payment.id, amountInMinor: 100, reference: `Wire ${transport}` };
    const created = dataOf(await stack.graphql<{ refundPayment: RefundView }>(REFUND_PAYMENT, { input }, stack.merchantKey)).refundPayment;
    /** Each result, with what the socket had read when it was handed over. */
    const results: { result: unknown; bytesRead: number }[] = [];
    let failure: string | undefined;
    const subscription = subscribe(
      transport,
      {
        url: new URL(endpoint(transport)),
        authorization: `Bearer ${stack.merchantKey}`,
        query: REFUND_UPDATED,
        variables: { paymentId: payment.id, refundId: created.id },
      },
      { next: (result) => void results.push({ result, bytesRead: subscription.bytesRead }), fail: (what) => (failure = what) },
    );
    open.push(subscription);
    await waitFor(() => (results.length >= 1 || failure ? true : undefined), 'the current state');
    expect(failure).toBeUndefined();
    expect(results[0]!.result).toEqual({ data: { refundUpdated: { id: created.id, status: 'PENDING' } } });

    await stack.sandboxJson('POST', `/sandbox/payments/${payment.id}/settle`);
    await waitFor(() => (results.length >= 2 || failure ? true : undefined), 'the refund authorized');
    expect(failure).toBeUndefined();
    const pushed = { data: { refundUpdated: { id: created.id, status: 'AUTHORIZED' } } };
    expect(results[1]!.result).toEqual(pushed);
    expect(results[1]!.bytesRead - results[0]!.bytesRead).toBe(messageBytes(transport, pushed).length);
  });
});
