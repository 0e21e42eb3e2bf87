import { randomUUID } from 'node:crypto';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import {
  advanceSandboxClock,
  CREATE_PAYOUT,
  dataOf,
  fixtures,
  ibanOf,
  paymentsIn,
  providerRequests,
  READ_PAYMENT,
  REFUND_PAYMENT,
  user,
  VERIFY,
  type PayoutView,
  type RefundView,
} from '../helpers/money';
import { topics } from '../../src/platform/live/topics';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

/*
 * Live refund and payout status over real WebSockets. Sandbox time runs at 1/1000 of real time, so refunds
 * execute and withdrawals move on exactly when a test advances the sandbox clock.
 */

// `id` is the provider's refund id (Refund.refundId), compared with the sandbox's records and the webhooks it sent.
const REFUND_FIELDS = 'id: refundId paymentId amountInMinor currency status reference createdAt authorizedAt executedAt failureReason';
const REFUND_UPDATED = `subscription Refunds($paymentId: ID!, $refundId: ID) {
  refundUpdated(paymentId: $paymentId, refundId: $refundId) { ${REFUND_FIELDS} }
}`;
const PAYOUT_FIELDS = 'transactionId status beneficiaryName beneficiaryIban amountInMinor currency authorisedAt submittedAt settledAt rejectedAt failedAt';
const PAYOUT_UPDATED = `subscription Payout($id: ID!) { payoutUpdated(transactionId: $id) { ${PAYOUT_FIELDS} } }`;

describe('live refund and payout status', () => {
  let stack: Stack;
  let seeded: Fixtures;

  beforeAll(async () => {
    // A quick refund pass (backing off 50 ms to 200 ms), so an authorization shows within a test's patience.
    stack = await startStack({
      env: { SANDBOX_TIME_SCALE: '0.001' },
      gateway: { live: { refundWatch: { initialDelayMs: 50, maxDelayMs: 200, factor: 2, leaseTtlMs: 1_000 } } },
    });
    seeded = await fixtures(stack);
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await disposeWsClients();
  });

  afterAll(async () => {
    await stack?.close();
  });

  async function refund(paymentId: string, amountInMinor = 100): Promise<RefundView> {
    const input = { paymentId, amountInMinor, reference: 'Live test' };
    return dataOf(await stack.graphql<{ refundPayment: RefundView }>(REFUND_PAYMENT, { input }, stack.merchantKey)).refundPayment;
  }

  describe('refundUpdated', () => {
    it('pushes PENDING, AUTHORIZED once the payment has settled, then EXECUTED once the refund executed, then completes', async () => {
      const [payment] = paymentsIn(seeded, 'authorized', 1);
      const created = await refund(payment!.id);
      const live = connectWs(stack.gateway.url, stack.merchantKey).subscribe<{ refundUpdated: RefundView }>(REFUND_UPDATED, {
        paymentId: payment!.id,
        refundId: created.id,
      });
      const first = await live.next();
      expect(first.errors).toBeUndefined();
      expect(first.data!.refundUpdated).toEqual(created);

      await stack.sandboxJson('POST', `/sandbox/payments/${payment!.id}/settle`);
      const authorized = (await live.next()).data!.refundUpdated;
      expect(authorized).toMatchObject({ id: created.id, status: 'AUTHORIZED', executedAt: null });
      expect(authorized.authorizedAt).toEqual(expect.any(String));
      await advanceSandboxClock(stack, 61);
      const executed = (await live.next()).data!.refundUpdated;
      expect(executed).toMatchObject({ id: created.id, paymentId: payment!.id, status: 'EXECUTED', amountInMinor: 100, failureReason: null });
      expect(executed.executedAt).toEqual(expect.any(String));
      expect(executed.authorizedAt).toEqual(expect.any(String));
      await expect(live.ended).resolves.toEqual({ completed: true });
    });

    it('pushes FAILED with payment_failed when the payment fails, to a subscriber of the whole payment', async () => {
      const [, payment] = paymentsIn(seeded, 'authorized', 2);
      const created = await refund(payment!.id, 250);
      const live = connectWs(stack.gateway.url, stack.merchantKey).subscribe<{ refundUpdated: RefundView }>(REFUND_UPDATED, { paymentId: payment!.id });
      expect((await live.next()).data!.refundUpdated).toMatchObject({ id: created.id, status: 'PENDING' });

      await stack.sandboxJson('POST', `/sandbox/payments/${payment!.id}/fail`);
      const failed = (await live.next()).data!.refundUpdated;
      expect(failed).toMatchObject({ id: created.id, status: 'FAILED', failureReason: 'payment_failed', executedAt: null });
      // A whole payment's stream stays open: the merchant may refund it again.
      expect(live.isEnded()).toBe(false);
    });

    it('shows an open subscription a new refund, its authorization (which has no webhook) and its execution (which has), in order', async () => {
      const [, , payment] = paymentsIn(seeded, 'executed', 3);
      const paymentId = payment!.id;
      const live = connectWs(stack.gateway.url, stack.merchantKey).subscribe<{ refundUpdated: RefundView }>(REFUND_UPDATED, { paymentId });
      const webhooksOf = async (refundId: string): Promise<{ type: string; delivered: boolean }[]> =>
        (await stack.sandboxJson<{ deliveries: { body: { type: string; refund_id?: string }; delivered: boolean }[] }>('GET', '/sandbox/webhooks')).deliveries
          .filter((delivery) => delivery.body.refund_id === refundId)
          .map((delivery) => ({ type: delivery.body.type, delivered: delivery.delivered }));

      // Made while the subscription is open, through this instance; the payment has not settled, so it is PENDING.
      const created = await refund(paymentId, 300);
      expect((await live.next()).data!.refundUpdated).toEqual(created);
      expect(created.status).toBe('PENDING');

      await stack.sandboxJson('POST', `/sandbox/payments/${paymentId}/settle`);
      const authorized = (await live.next()).data!.refundUpdated;
      expect(authorized).toMatchObject({ id: created.id, status: 'AUTHORIZED', executedAt: null });
      expect(await webhooksOf(created.id)).toEqual([]);
      // A late copy of the first state (an event still in flight while the pass read) is not sent: no status goes back.
      const late = { ...(await stack.gateway.features.provider.payments.getRefund(paymentId, created.id)), status: 'pending', authorized_at: undefined };
      await stack.gateway.features.live.bus.publish(topics.refund(paymentId), { paymentId, refund: late });

      await advanceSandboxClock(stack, 61);
      expect((await live.next()).data!.refundUpdated).toMatchObject({ id: created.id, status: 'EXECUTED' });
      expect(await webhooksOf(created.id)).toEqual([{ type: 'refund_executed', delivered: true }]);
      expect(live.results.map((result) => result.data!.refundUpdated.status)).toEqual(['PENDING', 'AUTHORIZED', 'EXECUTED']);
    });

    it('reads the refunds of a watched payment until its last subscriber leaves, and no more after', async () => {
      const [, payment] = paymentsIn(seeded, 'executed', 2);
      const paymentId = payment!.id;
      const listReads = async (): Promise<number> =>
        (await providerRequests(stack)).filter((request) => request.method === 'GET' && request.path === `/v3/payments/${paymentId}/refunds`).length;
      // The payment never settles here, so the refund stays PENDING and the pass has a reason to go on.
      const created = await refund(paymentId, 100);
      const subscribe = () => connectWs(stack.gateway.url, stack.merchantKey).subscribe<{ refundUpdated: RefundView }>(REFUND_UPDATED, { paymentId });
      const one = subscribe();
      const two = connectWs(stack.gateway.url, stack.merchantKey).subscribe<{ refundUpdated: RefundView }>(REFUND_UPDATED, {
        paymentId,
        refundId: created.id,
      });
      expect((await one.next()).data!.refundUpdated).toMatchObject({ id: created.id, status: 'PENDING' });
      expect((await two.next()).data!.refundUpdated).toMatchObject({ id: created.id, status: 'PENDING' });
      const opened = await listReads();
      await waitFor(async () => ((await listReads()) >= opened + 3 ? true : undefined), 'the refund pass to read the payment’s refunds');

      one.unsubscribe();
      const whileOneLeft = await listReads();
      await waitFor(async () => ((await listReads()) > whileOneLeft ? true : undefined), 'the pass to go on for the subscriber left');
      two.unsubscribe();
      await waitFor(() => (stack.gateway.features.refunds.watchers.watched.includes(paymentId) ? undefined : true), 'the pass to stop');
      const stopped = await listReads();
      // Longer than the pass's longest wait (200 ms) several times over: a pass still running would have read.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await listReads()).toBe(stopped);
    });

    it('sends every refund of the payment first, oldest first', async () => {
      const [payment] = paymentsIn(seeded, 'executed', 1);
      const one = await refund(payment!.id, 100);
      const two = await refund(payment!.id, 200);
      const live = connectWs(stack.gateway.url, stack.merchantKey).subscribe<{ refundUpdated: RefundView }>(REFUND_UPDATED, { paymentId: payment!.id });
      expect((await live.next()).data!.refundUpdated).toEqual(one);
      expect((await live.next()).data!.refundUpdated).toEqual(two);
    });

    it('opens subscribers of a payment on one read of its refunds, never on one older than a refund made here or an event', async () => {
      const [, payment] = paymentsIn(seeded, 'settled', 2);
      const paymentId = payment!.id;
      // Only the subscriptions' own reads are counted here: the refund pass reads the same list (tested above).
      jest.spyOn(stack.gateway.features.refunds.watchers, 'watch').mockReturnValue(() => undefined);
      const refundReads = async (): Promise<number> =>
        (await providerRequests(stack)).filter((request) => request.method === 'GET' && request.path.endsWith(`/payments/${paymentId}/refunds`)).length;
      const subscribe = () => connectWs(stack.gateway.url, stack.merchantKey).subscribe<{ refundUpdated: RefundView }>(REFUND_UPDATED, { paymentId });
      const firstStates = async (live: ReturnType<typeof subscribe>, count: number): Promise<RefundView[]> => {
        const states: RefundView[] = [];
        while (states.length < count) states.push((await live.next()).data!.refundUpdated);
        return states;
      };

      const one = await refund(paymentId, 100);
      const readsBefore = await refundReads();
      const early = [subscribe(), subscribe(), subscribe()];
      for (const live of early) expect(await firstStates(live, 1)).toEqual([one]);
      expect(await refundReads()).toBe(readsBefore + 1);

      // No webhook announces a new refund: the gateway that made it pushes it to every open subscriber, and stops
      // sharing the earlier read with those that open from now on.
      const two = await refund(paymentId, 200);
      for (const live of early) expect(await firstStates(live, 1)).toEqual([two]);
      expect(await firstStates(subscribe(), 2)).toEqual([one, two]);

      // The executions' webhooks are events: whoever opens after them is given the executed refunds.
      await advanceSandboxClock(stack, 61);
      const seen = await firstStates(early[0]!, 2);
      expect(seen.map((state) => [state.id, state.status]).sort()).toEqual(
        [
          [one.id, 'EXECUTED'],
          [two.id, 'EXECUTED'],
        ].sort(),
      );
      expect((await firstStates(subscribe(), 2)).map((state) => state.status)).toEqual(['EXECUTED', 'EXECUTED']);
    });

    it('needs a merchant key, and a payment and refund that exist', async () => {
      const [payment] = paymentsIn(seeded, 'settled', 1);
      const session = await stack.signIn('john', 'doe');
      const asUser = connectWs(stack.gateway.url, session).subscribe(REFUND_UPDATED, { paymentId: payment!.id });
      expect((await asUser.next()).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      const anonymous = connectWs(stack.gateway.url).subscribe(REFUND_UPDATED, { paymentId: payment!.id });
      expect((await anonymous.next()).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      const merchant = connectWs(stack.gateway.url, stack.merchantKey);
      expect((await merchant.subscribe(REFUND_UPDATED, { paymentId: randomUUID() }).next()).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      expect((await merchant.subscribe(REFUND_UPDATED, { paymentId: payment!.id, refundId: randomUUID() }).next()).errors?.[0]?.extensions?.code).toBe(
        'NOT_FOUND',
      );
      expect((await merchant.subscribe(REFUND_UPDATED, { paymentId: 'nope' }).next()).errors?.[0]?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'paymentId',
      });
    });

    it('answers the refund state correctly after a restart between the webhook and the query', async () => {
      const [payment] = paymentsIn(seeded, 'authorized', 3).slice(2);
      const created = await refund(payment!.id);
      await stack.sandboxJson('POST', `/sandbox/payments/${payment!.id}/settle`);
      await advanceSandboxClock(stack, 61);
      await waitFor(async () => {
        const { deliveries } = await stack.sandboxJson<{ deliveries: { body: { refund_id?: string }; delivered: boolean }[] }>('GET', '/sandbox/webhooks');
        return deliveries.find((delivery) => delivery.body.refund_id === created.id && delivery.delivered);
      }, 'the refund_executed webhook to be delivered');
      await stack.restartGateway();

      const read = dataOf(await stack.graphql<{ payment: { refunds: RefundView[] } }>(READ_PAYMENT, { id: payment!.id }, stack.merchantKey));
      expect(read.payment.refunds).toEqual([expect.objectContaining({ id: created.id, status: 'EXECUTED' })]);
      const live = connectWs(stack.gateway.url, stack.merchantKey).subscribe<{ refundUpdated: RefundView }>(REFUND_UPDATED, {
        paymentId: payment!.id,
        refundId: created.id,
      });
      expect((await live.next()).data!.refundUpdated).toMatchObject({ id: created.id, status: 'EXECUTED' });
      await expect(live.ended).resolves.toEqual({ completed: true });
    });
  });

  describe('payoutUpdated', () => {
    async function johnsPayout(session: string): Promise<PayoutView> {
      dataOf(await stack.graphql(VERIFY, { name: 'John Doe' }, session));
      const input = {
        transactionId: randomUUID(),
        beneficiaryName: 'John Doe',
        beneficiaryIban: ibanOf(user(seeded, 'john')),
        beneficiaryReference: 'Live payout',
        amountInMinor: 1_234,
        currency: 'GBP',
      };
      return dataOf(await stack.graphql<{ createPayout: PayoutView }>(CREATE_PAYOUT, { input }, session)).createPayout;
    }

    it('watches a payout the session made until it settles, pushing each stage, then completes', async () => {
      const session = await stack.signIn('john', 'doe');
      const payout = await johnsPayout(session);
      const live = connectWs(stack.gateway.url, session).subscribe<{ payoutUpdated: PayoutView }>(PAYOUT_UPDATED, { id: payout.transactionId });
      const first = await live.next();
      expect(first.errors).toBeUndefined();
      expect(first.data!.payoutUpdated).toMatchObject({ transactionId: payout.transactionId, status: 'authorised', submittedAt: null });
      await waitFor(() => stack.gateway.features.payouts.watchers.isPolling(payout.transactionId) || undefined, 'the payout watcher to start');

      await advanceSandboxClock(stack, 5);
      const submitted = (await live.next()).data!.payoutUpdated;
      expect(submitted).toMatchObject({ status: 'submitted', settledAt: null });
      expect(submitted.submittedAt).toEqual(expect.any(String));

      await advanceSandboxClock(stack, 30);
      const settled = (await live.next()).data!.payoutUpdated;
      expect(settled).toMatchObject({ status: 'settled', rejectedAt: null, failedAt: null, amountInMinor: 1_234 });
      expect(settled.settledAt).toEqual(expect.any(String));
      await expect(live.ended).resolves.toEqual({ completed: true });
      // The watcher stops with the last subscriber.
      await waitFor(() => (stack.gateway.features.payouts.watchers.watched.includes(payout.transactionId) ? undefined : true), 'the watcher to stop');
    });

    it('runs one watcher for all subscribers of a payout, and stops it when the last one leaves', async () => {
      const session = await stack.signIn('john', 'doe');
      const payout = await johnsPayout(session);
      const watchers = stack.gateway.features.payouts.watchers;
      const one = connectWs(stack.gateway.url, session).subscribe<{ payoutUpdated: PayoutView }>(PAYOUT_UPDATED, { id: payout.transactionId });
      const two = connectWs(stack.gateway.url, stack.merchantKey).subscribe<{ payoutUpdated: PayoutView }>(PAYOUT_UPDATED, { id: payout.transactionId });
      expect((await one.next()).data!.payoutUpdated.status).toBe('authorised');
      expect((await two.next()).data!.payoutUpdated.status).toBe('authorised');
      expect(watchers.watched.filter((id) => id === payout.transactionId)).toHaveLength(1);
      one.unsubscribe();
      two.unsubscribe();
      await waitFor(() => (watchers.watched.includes(payout.transactionId) ? undefined : true), 'the watcher to stop with its last subscriber');
    });

    it('lets a merchant key watch any payout, and a session only its own', async () => {
      const transactionId = randomUUID();
      await stack.gateway.features.provider.payouts.createWithdrawal({
        transaction_id: transactionId,
        beneficiary_name: 'Jane Roe',
        beneficiary_iban: ibanOf(user(seeded, 'jane')),
        beneficiary_reference: 'Direct',
        currency: 'GBP',
        amount_in_minor: 500,
        context_code: 'withdrawal',
      });
      const merchant = connectWs(stack.gateway.url, stack.merchantKey).subscribe<{ payoutUpdated: PayoutView }>(PAYOUT_UPDATED, { id: transactionId });
      expect((await merchant.next()).data!.payoutUpdated).toMatchObject({ transactionId, status: 'authorised' });

      const jane = await stack.signIn('jane', 'doe');
      const asJane = connectWs(stack.gateway.url, jane).subscribe(PAYOUT_UPDATED, { id: transactionId });
      expect((await asJane.next()).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      const anonymous = connectWs(stack.gateway.url).subscribe(PAYOUT_UPDATED, { id: transactionId });
      expect((await anonymous.next()).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      const unknown = connectWs(stack.gateway.url, stack.merchantKey).subscribe(PAYOUT_UPDATED, { id: randomUUID() });
      expect((await unknown.next()).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    });

    it('sends a payout that is already final once and completes, without starting a watcher', async () => {
      const transactionId = randomUUID();
      await stack.gateway.features.provider.payouts.createWithdrawal({
        transaction_id: transactionId,
        beneficiary_name: 'Jane Roe',
        beneficiary_iban: ibanOf(user(seeded, 'jane')),
        beneficiary_reference: 'REJECT me',
        currency: 'GBP',
        amount_in_minor: 700,
        context_code: 'withdrawal',
      });
      await advanceSandboxClock(stack, 6);
      const live = connectWs(stack.gateway.url, stack.merchantKey).subscribe<{ payoutUpdated: PayoutView }>(PAYOUT_UPDATED, { id: transactionId });
      expect((await live.next()).data!.payoutUpdated).toMatchObject({ status: 'rejected' });
      await expect(live.ended).resolves.toEqual({ completed: true });
      expect(stack.gateway.features.payouts.watchers.watched).not.toContain(transactionId);
    });
  });
});
