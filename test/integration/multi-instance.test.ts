import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { loadConfig, withProvider } from '../../src/platform/config/config';
import { pointSandboxWebhooksAt, startEmbeddedSandbox } from '../../src/embedded-sandbox';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import type { Sandbox } from '../../src/sandbox/sandbox';
import { createGateway, type Gateway } from '../../src/app/gateway';
import { dataOf, ibanOf, paymentsIn, REFUND_PAYMENT, user, type PayoutView, type RefundView } from '../helpers/money';
import { startWebhookListener, type ReceivedWebhook, type WebhookListener } from '../helpers/sandbox-webhooks';
import { createPostgresSchema, type PostgresSchema } from '../helpers/postgres';
import { graphqlAt, MERCHANT_KEY, sandboxJsonAt, signInAt, type GraphQLResult } from '../helpers/stack';
import { deleteRedisKeys, REDIS_URL, requireRedis } from '../helpers/redis';
import { waitFor } from '../helpers/wait-for';
import { connectWs, disposeWsClients, type LiveSubscription } from '../helpers/ws-client';
import { closeHttpStreams, streamOverHttp } from '../helpers/http-stream-client';
import { holdNextSessionLookup } from '../helpers/hold-lookup';
import type { IdentityEvent } from '../../src/identity/identity-events';

/*
 * Two gateway instances, A and B, sharing PostgreSQL for the store (STORE_URL, a schema of this run's own) and
 * Redis for events (PUBSUB_URL), in front of one sandbox. Both must be running on 127.0.0.1 (.ci/run starts them):
 * without them these tests fail, they are never skipped. Every key, channel and table of this run is removed after.
 */

const PREFIX = `bankgraph-test-${randomUUID().slice(0, 8)}:`;

const START = `mutation Start($input: StartDataTaskInput!) { startDataTask(input: $input) { id: taskId status } }`;
const TASK_UPDATED = `subscription Updated($id: ID!) { dataTaskUpdated(id: $id) { id: taskId status accounts { id: accountId } } }`;
const REFUND_UPDATED = `subscription Refunds($paymentId: ID!, $refundId: ID) {
  refundUpdated(paymentId: $paymentId, refundId: $refundId) { id: refundId status executedAt }
}`;
const PAYOUT_UPDATED = `subscription Payout($id: ID!) { payoutUpdated(transactionId: $id) { transactionId status } }`;

describe('two gateway instances sharing PostgreSQL and Redis', () => {
  let schema: PostgresSchema;
  let sandbox: Sandbox;
  let a: Gateway;
  let b: Gateway;
  let seeded: Fixtures;
  let listener: WebhookListener | undefined;

  beforeAll(async () => {
    await requireRedis('The multi-instance tests');
    schema = await createPostgresSchema('multi_instance');
    const base = loadConfig({
      NODE_ENV: 'test',
      PORT: '0',
      SANDBOX_PORT: '0',
      SANDBOX_TIME_SCALE: '0.001',
      STORE_URL: schema.url,
      PUBSUB_URL: REDIS_URL,
      REDIS_KEY_PREFIX: PREFIX,
      MERCHANT_KEYS: MERCHANT_KEY,
      HTTP_BACKOFF_BASE_MS: '5',
      HTTP_BACKOFF_CAP_MS: '20',
    });
    const started = await startEmbeddedSandbox(base);
    sandbox = started.sandbox;
    const config = withProvider(base, started.provider);
    // A short watch schedule and lease, so a watcher hand-over happens within the test's patience.
    const watch = { initialDelayMs: 100, maxDelayMs: 400, factor: 2, leaseTtlMs: 1_500 };
    const options = { live: { payoutWatch: watch, refundWatch: watch } };
    a = await createGateway(config, options);
    b = await createGateway(config, options);
    await pointSandboxWebhooksAt(sandbox.url, a.url);
    seeded = await sandboxJson<Fixtures>('GET', '/sandbox/fixtures');
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await disposeWsClients();
    closeHttpStreams();
    await listener?.close();
    listener = undefined;
    await pointSandboxWebhooksAt(sandbox.url, a.url);
  });

  afterAll(async () => {
    await Promise.allSettled([a?.close(), b?.close()]);
    await sandbox?.close();
    await deleteRedisKeys(PREFIX).catch(() => undefined);
    await schema?.drop();
  });

  function sandboxJson<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    return sandboxJsonAt<T>(sandbox.url, method, path, body);
  }

  function graphql<T>(gateway: Gateway, query: string, variables: Record<string, unknown>, token: string): Promise<GraphQLResult<T>> {
    return graphqlAt<T>(gateway.url, query, variables, token);
  }

  const advance = (seconds: number): Promise<unknown> => sandboxJson('POST', '/sandbox/clock', { advanceSeconds: seconds });

  async function refund(paymentId: string, amountInMinor = 100): Promise<RefundView> {
    const input = { paymentId, amountInMinor, reference: 'Two instances' };
    return dataOf(await graphql<{ refundPayment: RefundView }>(a, REFUND_PAYMENT, { input }, MERCHANT_KEY)).refundPayment;
  }

  /** Delivers a captured webhook byte for byte, with its signature, to a gateway's receiver. */
  async function forward(webhook: ReceivedWebhook, gateway: Gateway): Promise<{ status: number; body: unknown }> {
    const headers: Record<string, string> = {};
    for (const name of ['content-type', 'x-tl-webhook-timestamp', 'tl-signature']) headers[name] = String(webhook.headers[name]);
    const response = await fetch(`${gateway.url}${new URL(webhook.path, 'http://x').pathname}`, { method: 'POST', headers, body: webhook.rawBody });
    return { status: response.status, body: await response.json() };
  }

  it('shares sessions and data tasks, and pushes to a subscriber on B the webhook delivered to A', async () => {
    const session = await signInAt(a.url, 'john', 'doe');
    const task = dataOf(await graphql<{ startDataTask: { id: string } }>(a, START, { input: { resource: 'ACCOUNTS' } }, session)).startDataTask;
    const onB = connectWs(b.url, session).subscribe<{ dataTaskUpdated: { id: string; status: string; accounts: { id: string }[] | null } }>(TASK_UPDATED, {
      id: task.id,
    });
    expect((await onB.next()).data!.dataTaskUpdated).toMatchObject({ id: task.id, status: 'QUEUED', accounts: null });
    const acceptedByA = a.features.webhooks.stats.accepted;
    const acceptedByB = b.features.webhooks.stats.accepted;

    await advance(1);
    const done = await onB.next();
    expect(done.errors).toBeUndefined();
    expect(done.data!.dataTaskUpdated.status).toBe('SUCCEEDED');
    expect(done.data!.dataTaskUpdated.accounts!.map((account) => account.id)).toEqual(user(seeded, 'john').accounts.map((item) => item.account.account_id));
    expect(a.features.webhooks.stats.accepted).toBe(acceptedByA + 1);
    expect(b.features.webhooks.stats.accepted).toBe(acceptedByB);
    await expect(onB.ended).resolves.toEqual({ completed: true });
  });

  it('pushes a refund event received by A to a merchant subscribed on B', async () => {
    const [payment] = paymentsIn(seeded, 'authorized', 1);
    const created = await refund(payment!.id);
    const onB = connectWs(b.url, MERCHANT_KEY).subscribe<{ refundUpdated: RefundView }>(REFUND_UPDATED, { paymentId: payment!.id, refundId: created.id });
    expect((await onB.next()).data!.refundUpdated.status).toBe('PENDING');
    await sandboxJson('POST', `/sandbox/payments/${payment!.id}/settle`);
    expect((await onB.next()).data!.refundUpdated).toMatchObject({ id: created.id, status: 'AUTHORIZED' });
    await advance(61);
    expect((await onB.next()).data!.refundUpdated).toMatchObject({ id: created.id, status: 'EXECUTED' });
    await expect(onB.ended).resolves.toEqual({ completed: true });
  });

  it('runs one refund pass across both instances, and subscribers on both see what it reads', async () => {
    const [, payment] = paymentsIn(seeded, 'authorized', 2);
    const paymentId = payment!.id;
    const created = await refund(paymentId);
    const subscribeOn = (gateway: Gateway) => connectWs(gateway.url, MERCHANT_KEY).subscribe<{ refundUpdated: RefundView }>(REFUND_UPDATED, { paymentId });
    const onA = subscribeOn(a);
    const onB = subscribeOn(b);
    expect((await onA.next()).data!.refundUpdated).toMatchObject({ id: created.id, status: 'PENDING' });
    expect((await onB.next()).data!.refundUpdated).toMatchObject({ id: created.id, status: 'PENDING' });
    const polling = (): ('a' | 'b')[] => [
      ...(a.features.refunds.watchers.isPolling(paymentId) ? (['a'] as const) : []),
      ...(b.features.refunds.watchers.isPolling(paymentId) ? (['b'] as const) : []),
    ];
    const leader = (await waitFor(() => (polling().length > 0 ? polling() : undefined), 'one instance to start the refund pass')) as ('a' | 'b')[];
    expect(leader).toHaveLength(1);
    expect(a.features.refunds.watchers.watched).toContain(paymentId);
    expect(b.features.refunds.watchers.watched).toContain(paymentId);

    await sandboxJson('POST', `/sandbox/payments/${paymentId}/settle`);
    expect((await onA.next()).data!.refundUpdated).toMatchObject({ id: created.id, status: 'AUTHORIZED' });
    expect((await onB.next()).data!.refundUpdated).toMatchObject({ id: created.id, status: 'AUTHORIZED' });
    expect(polling()).toEqual(leader);

    await advance(61);
    expect((await onA.next()).data!.refundUpdated).toMatchObject({ id: created.id, status: 'EXECUTED' });
    expect((await onB.next()).data!.refundUpdated).toMatchObject({ id: created.id, status: 'EXECUTED' });
    // Every refund of the payment is final: the pass rests, on both instances, until a new refund is made.
    await waitFor(() => (polling().length === 0 ? true : undefined), 'the refund pass to rest');
  });

  it('publishes a webhook delivered to both instances once', async () => {
    listener = await startWebhookListener('/webhooks/payments');
    await pointSandboxWebhooksAt(sandbox.url, new URL(listener.url).origin);
    const [payment] = paymentsIn(seeded, 'settled', 1);
    const first = await refund(payment!.id, 150);
    const subscribeOn = (gateway: Gateway) =>
      connectWs(gateway.url, MERCHANT_KEY).subscribe<{ refundUpdated: RefundView }>(REFUND_UPDATED, { paymentId: payment!.id });
    const onA = subscribeOn(a);
    const onB = subscribeOn(b);
    expect((await onA.next()).data!.refundUpdated).toMatchObject({ id: first.id, status: 'AUTHORIZED' });
    expect((await onB.next()).data!.refundUpdated).toMatchObject({ id: first.id, status: 'AUTHORIZED' });
    const published = a.features.webhooks.stats.published + b.features.webhooks.stats.published;

    await advance(61);
    const executed = await listener.next();
    expect(executed.body).toMatchObject({ type: 'refund_executed', refund_id: first.id });
    const answers = await Promise.all([forward(executed, a), forward(executed, b)]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(answers.map((answer) => (answer.body as { status: string }).status).sort()).toEqual(['accepted', 'duplicate']);
    expect((await onA.next()).data!.refundUpdated).toMatchObject({ id: first.id, status: 'EXECUTED' });
    expect((await onB.next()).data!.refundUpdated).toMatchObject({ id: first.id, status: 'EXECUTED' });
    await Promise.all([a.features.webhooks.idle(), b.features.webhooks.idle()]);
    expect(a.features.webhooks.stats.published + b.features.webhooks.stats.published).toBe(published + 1);
    expect(await b.features.webhooks.inbox.get('payments', executed.body.event_id)).toMatchObject({ type: 'refund_executed' });

    // Everything published so far has reached Redis; the next event each subscriber sees is a later refund's,
    // so no second copy of the first event was ever sent.
    const second = await refund(payment!.id, 250);
    // No webhook announces a new refund: the instance that made it pushes it to subscribers on both.
    expect((await onA.next()).data!.refundUpdated).toMatchObject({ id: second.id, status: 'AUTHORIZED' });
    expect((await onB.next()).data!.refundUpdated).toMatchObject({ id: second.id, status: 'AUTHORIZED' });
    await advance(61);
    const secondExecuted = await listener.next();
    expect(secondExecuted.body).toMatchObject({ type: 'refund_executed', refund_id: second.id });
    expect((await forward(secondExecuted, b)).status).toBe(200);
    expect((await onA.next()).data!.refundUpdated).toMatchObject({ id: second.id, status: 'EXECUTED' });
    expect((await onB.next()).data!.refundUpdated).toMatchObject({ id: second.id, status: 'EXECUTED' });
    expect(onA.results.map((result) => result.data!.refundUpdated.status)).toEqual(['AUTHORIZED', 'EXECUTED', 'AUTHORIZED', 'EXECUTED']);
    expect(onB.results).toHaveLength(4);
  });

  it('runs one payout watcher across both instances, and hands it over when its subscribers leave', async () => {
    const transactionId = randomUUID();
    await a.features.provider.payouts.createWithdrawal({
      transaction_id: transactionId,
      beneficiary_name: 'Jane Roe',
      beneficiary_iban: ibanOf(user(seeded, 'jane')),
      beneficiary_reference: 'Two instances',
      currency: 'GBP',
      amount_in_minor: 900,
      context_code: 'withdrawal',
    });
    const onA = connectWs(a.url, MERCHANT_KEY).subscribe<{ payoutUpdated: PayoutView }>(PAYOUT_UPDATED, { id: transactionId });
    const onB = connectWs(b.url, MERCHANT_KEY).subscribe<{ payoutUpdated: PayoutView }>(PAYOUT_UPDATED, { id: transactionId });
    expect((await onA.next()).data!.payoutUpdated.status).toBe('authorised');
    expect((await onB.next()).data!.payoutUpdated.status).toBe('authorised');
    const polling = (): ('a' | 'b')[] => [
      ...(a.features.payouts.watchers.isPolling(transactionId) ? (['a'] as const) : []),
      ...(b.features.payouts.watchers.isPolling(transactionId) ? (['b'] as const) : []),
    ];
    const leader = (await waitFor(() => (polling().length > 0 ? polling() : undefined), 'one instance to start watching')) as ('a' | 'b')[];
    expect(leader).toHaveLength(1);

    await advance(5);
    expect((await onA.next()).data!.payoutUpdated.status).toBe('submitted');
    expect((await onB.next()).data!.payoutUpdated.status).toBe('submitted');
    expect(polling()).toEqual(leader);

    // The watching instance's subscriber leaves: the other instance takes the lease over and carries on.
    const [leaving, staying, follower] = leader[0] === 'a' ? [onA, onB, b] : [onB, onA, a];
    leaving.unsubscribe();
    await waitFor(() => (follower.features.payouts.watchers.isPolling(transactionId) ? true : undefined), 'the other instance to take the watch over');
    expect(polling()).toHaveLength(1);
    await advance(30);
    expect((await staying.next()).data!.payoutUpdated.status).toBe('settled');
    await expect(staying.ended).resolves.toEqual({ completed: true });
  });

  it('closes on B, within a second, the subscriptions of a session logged out on A', async () => {
    const session = await signInAt(a.url, 'john', 'doe');
    const task = dataOf(await graphql<{ startDataTask: { id: string } }>(a, START, { input: { resource: 'ACCOUNTS' } }, session)).startDataTask;
    const live = connectWs(b.url, session).subscribe(TASK_UPDATED, { id: task.id });
    expect((await live.next()).errors).toBeUndefined();
    const loggedOut = await fetch(`${a.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${session}` } });
    expect(loggedOut.status).toBe(204);
    const started = performance.now();
    expect(((await live.ended).error as { code?: number }).code).toBe(4401);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect((await graphql(b, '{ viewer { accounts { id: accountId } } }', {}, session)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it.each(['sse', 'multipart'] as const)('ends on B, within a second, the %s stream of a user revoked on A', async (transport) => {
    // A revoked user cannot sign in again: one user for each transport.
    const session = await signInAt(a.url, transport === 'sse' ? 'cara' : 'sam', 'doe');
    const task = dataOf(await graphql<{ startDataTask: { id: string } }>(a, START, { input: { resource: 'ACCOUNTS' } }, session)).startDataTask;
    const live = streamOverHttp(transport, b.url, TASK_UPDATED, { id: task.id }, { token: session });
    expect((await live.next()).errors).toBeUndefined();
    const { viewer } = dataOf(await graphql<{ viewer: { id: string } }>(a, '{ viewer { id } }', {}, session));
    expect(dataOf(await graphql(a, 'mutation ($id: ID!) { revokeUser(userId: $id) }', { id: viewer.id }, MERCHANT_KEY))).toEqual({ revokeUser: true });
    const started = performance.now();
    await live.ended;
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(live.results.at(-1)!.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  /** Resolves once `gateway` has heard an identity event of this kind (from the bus: it was announced on another instance). */
  async function heardOn(gateway: Gateway, kind: IdentityEvent['kind']): Promise<{ heard: Promise<void>; stop(): Promise<void> }> {
    let heard!: () => void;
    const promise = new Promise<void>((resolve) => (heard = resolve));
    const stop = await gateway.features.identity.identityEvents.listen((event) => {
      if (event.kind === kind) heard();
    });
    return { heard: promise, stop };
  }

  async function closeOf(live: LiveSubscription<unknown>): Promise<number | undefined> {
    return ((await live.ended).error as { code?: number } | undefined)?.code;
  }

  it('closes a socket on B whose first lookup was under way when its session logged out on A, and runs none of its operations', async () => {
    const session = await signInAt(a.url, 'john', 'doe');
    const held = holdNextSessionLookup(b.features.identity.sessions);
    const query = connectWs(b.url, session).subscribe('{ viewer { id: userId } }');
    await held.reached;
    const onB = await heardOn(b, 'logout');
    try {
      expect((await fetch(`${a.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${session}` } })).status).toBe(204);
      await onB.heard;
    } finally {
      await onB.stop();
    }
    held.release();
    expect(await closeOf(query)).toBe(4401);
    expect(query.results.filter((result) => result.data)).toEqual([]);
  });

  it('closes a socket on B whose first lookup was under way when its user was revoked on A, and runs none of its operations', async () => {
    const session = await signInAt(a.url, 'lee', 'doe');
    const userId = dataOf(await graphql<{ viewer: { id: string } }>(a, '{ viewer { id: userId } }', {}, session)).viewer.id;
    const held = holdNextSessionLookup(b.features.identity.sessions);
    const query = connectWs(b.url, session).subscribe('{ viewer { id: userId } }');
    await held.reached;
    const onB = await heardOn(b, 'user-revoked');
    try {
      expect(dataOf(await graphql(a, 'mutation ($id: ID!) { revokeUser(userId: $id) }', { id: userId }, MERCHANT_KEY))).toEqual({ revokeUser: true });
      await onB.heard;
    } finally {
      await onB.stop();
    }
    held.release();
    expect(await closeOf(query)).toBe(4401);
    expect(query.results.filter((result) => result.data)).toEqual([]);
  });
});
