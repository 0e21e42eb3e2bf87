import { randomUUID } from 'node:crypto';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import { CREATE_PAYOUT, dataOf, fixtures, ibanOf, paymentsIn, REFUND_PAYMENT, user, VERIFY, type PayoutView, type RefundView } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

/* An answer that is an object recorded earlier under the same idempotency key says so: extensions.idempotentReplay. */

describe('extensions.idempotentReplay', () => {
  let stack: Stack;
  let seeded: Fixtures;

  beforeAll(async () => {
    stack = await startStack();
    seeded = await fixtures(stack);
  });

  afterEach(async () => {
    await disposeWsClients();
  });

  afterAll(async () => {
    await stack?.close();
  });

  async function verifiedJohn(): Promise<string> {
    const session = await stack.signIn('john', 'doe');
    dataOf(await stack.graphql(VERIFY, { name: 'John Doe' }, session));
    return session;
  }

  function payoutInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      beneficiaryName: 'John Doe',
      beneficiaryIban: ibanOf(user(seeded, 'john')),
      beneficiaryReference: 'Replay test',
      amountInMinor: 2_000,
      currency: 'GBP',
      ...overrides,
    };
  }

  it('is on the second identical createPayout with a transactionId, and not on the first', async () => {
    const session = await verifiedJohn();
    const input = payoutInput({ transactionId: randomUUID() });
    const first = await stack.graphql<{ createPayout: PayoutView }>(CREATE_PAYOUT, { input }, session);
    const second = await stack.graphql<{ createPayout: PayoutView }>(CREATE_PAYOUT, { input }, session);
    expect(dataOf(second).createPayout.transactionId).toBe(dataOf(first).createPayout.transactionId);
    expect(first.extensions?.idempotentReplay).toBeUndefined();
    expect(second.extensions).toMatchObject({ idempotentReplay: true });
  });

  it('is on an identical createPayout without transactionId inside the window, and not on a new transactionId', async () => {
    const session = await verifiedJohn();
    const input = payoutInput({ amountInMinor: 2_001 });
    const first = await stack.graphql<{ createPayout: PayoutView }>(CREATE_PAYOUT, { input }, session);
    const second = await stack.graphql<{ createPayout: PayoutView }>(CREATE_PAYOUT, { input }, session);
    expect(dataOf(second).createPayout.transactionId).toBe(dataOf(first).createPayout.transactionId);
    expect(first.extensions?.idempotentReplay).toBeUndefined();
    expect(second.extensions).toMatchObject({ idempotentReplay: true });

    const fresh = await stack.graphql<{ createPayout: PayoutView }>(CREATE_PAYOUT, { input: { ...input, transactionId: randomUUID() } }, session);
    expect(dataOf(fresh).createPayout.transactionId).not.toBe(dataOf(first).createPayout.transactionId);
    expect(fresh.extensions?.idempotentReplay).toBeUndefined();
  });

  it('is on the second refundPayment under the same idempotencyKey, and not on the first', async () => {
    const [payment] = paymentsIn(seeded, 'settled');
    const input = { paymentId: payment!.id, amountInMinor: 100, reference: 'Replay test', idempotencyKey: randomUUID() };
    const first = await stack.graphql<{ refundPayment: RefundView }>(REFUND_PAYMENT, { input }, stack.merchantKey);
    const second = await stack.graphql<{ refundPayment: RefundView }>(REFUND_PAYMENT, { input }, stack.merchantKey);
    expect(dataOf(second).refundPayment.id).toBe(dataOf(first).refundPayment.id);
    expect(first.extensions?.idempotentReplay).toBeUndefined();
    expect(second.extensions).toMatchObject({ idempotentReplay: true });
  });

  it('is on a repeated refundPayment over Server-Sent Events too', async () => {
    const [payment] = paymentsIn(seeded, 'settled');
    const input = { paymentId: payment!.id, amountInMinor: 101, reference: 'Replay SSE', idempotencyKey: randomUUID() };
    const post = async (): Promise<{ data?: { refundPayment: RefundView }; extensions?: Record<string, unknown> }> => {
      const response = await fetch(`${stack.gateway.url}/graphql/stream`, {
        method: 'POST',
        headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${stack.merchantKey}` },
        body: JSON.stringify({ query: REFUND_PAYMENT, variables: { input } }),
      });
      const next = (await response.text()).split('\n\n').find((block) => block.startsWith('event: next'))!;
      return JSON.parse(/^data:(.*)$/m.exec(next)![1]!) as { data?: { refundPayment: RefundView }; extensions?: Record<string, unknown> };
    };
    const first = await post();
    const second = await post();
    expect(second.data!.refundPayment.id).toBe(first.data!.refundPayment.id);
    expect(first.extensions?.idempotentReplay).toBeUndefined();
    expect(second.extensions).toMatchObject({ idempotentReplay: true });
  });

  it('is on a repeated createPayout over WebSocket too', async () => {
    const session = await verifiedJohn();
    const input = payoutInput({ transactionId: randomUUID(), amountInMinor: 2_002 });
    const ws = connectWs(stack.gateway.url, session);
    const first = await ws.subscribe<{ createPayout: PayoutView }>(CREATE_PAYOUT, { input }).next();
    const second = await ws.subscribe<{ createPayout: PayoutView }>(CREATE_PAYOUT, { input }).next();
    expect(second.data!.createPayout.transactionId).toBe(first.data!.createPayout.transactionId);
    expect((first as { extensions?: Record<string, unknown> }).extensions?.idempotentReplay).toBeUndefined();
    expect((second as { extensions?: Record<string, unknown> }).extensions).toMatchObject({ idempotentReplay: true });
  });
});
