import { randomUUID } from 'node:crypto';
import { generateSigningKey } from '../../src/sandbox/signing';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import { advanceSandboxClock, dataOf, fixtures, paymentsIn, REFUND_PAYMENT, type RefundView } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';
import { post, signedDelivery, startTestJwks, type SignOptions, type TestJwks } from '../helpers/webhook-signer';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

/*
 * The webhook receivers against forged, replayed and malformed deliveries. The test runs its own JWKS (on the
 * gateway's allow-list next to the sandbox's) so it can sign deliveries exactly as the provider does, or not.
 * Sandbox time runs at 1/1000 of real time: the sandbox's own webhooks go out only when a test advances its clock.
 */

const START = `mutation Start($input: StartDataTaskInput!) { startDataTask(input: $input) { id: taskId status } }`;
const TASK = `query Task($id: ID!) { dataTask(id: $id) { id: taskId status completedAt } }`;
const UPDATED = `subscription Updated($id: ID!) { dataTaskUpdated(id: $id) { id: taskId status completedAt accounts { id: accountId } } }`;
const REFUND_UPDATED = `subscription Refunds($paymentId: ID!, $refundId: ID) {
  refundUpdated(paymentId: $paymentId, refundId: $refundId) { id: refundId status executedAt failureReason }
}`;

interface Task {
  id: string;
  status: string;
  completedAt: string | null;
  accounts?: { id: string }[] | null;
}

describe('webhook receivers', () => {
  let stack: Stack;
  let seeded: Fixtures;
  let jwks: TestJwks;
  let rogue: TestJwks;
  let session: string;

  beforeAll(async () => {
    jwks = await startTestJwks();
    rogue = await startTestJwks(jwks.kid);
    stack = await startStack({
      env: { SANDBOX_TIME_SCALE: '0.001' },
      provider: (provider) => ({ ...provider, webhookJwksUrls: [...provider.webhookJwksUrls, jwks.url] }),
      // An unknown kid re-fetches the JWKS at most once a second here (5 s by default), to keep the rotation test short.
      gateway: { live: { jwksMinRefetchIntervalMs: 1_000 } },
    });
    seeded = await fixtures(stack);
    session = await stack.signIn('john', 'doe');
  });

  afterEach(async () => {
    await disposeWsClients();
  });

  afterAll(async () => {
    await stack?.close();
    await jwks?.close();
    await rogue?.close();
  });

  const signer = (): SignOptions => ({ jku: jwks.url, kid: jwks.kid, privateKey: jwks.privateKey });
  const webhooks = () => stack.gateway.features.webhooks;
  const paymentsUrl = (): string => `${stack.gateway.url}/webhooks/payments`;

  /** Starts a data task and finds the webhook address the provider was given (the sandbox logs the query). */
  async function startTask(): Promise<{ id: string; webhookUrl: string }> {
    const task = dataOf(await stack.graphql<{ startDataTask: Task }>(START, { input: { resource: 'ACCOUNTS' } }, session)).startDataTask;
    const { requests } = await stack.sandboxJson<{ requests: { path: string; query: Record<string, string> }[] }>('GET', '/sandbox/requests');
    const uris = requests.filter((request) => request.path === '/data/v1/accounts' && request.query.webhook_uri).map((request) => request.query.webhook_uri!);
    return { id: task.id, webhookUrl: uris.at(-1)! };
  }

  function dataBody(taskId: string, status = 'succeeded'): string {
    return JSON.stringify({
      request_timestamp: new Date().toISOString(),
      request_uri: `${stack.sandbox.url}/data/v1/accounts`,
      results_uri: `${stack.sandbox.url}/data/v1/results/${taskId}`,
      credentials_id: 'test',
      task_id: taskId,
      status,
    });
  }

  async function refundOf(paymentId: string): Promise<RefundView> {
    const input = { paymentId, amountInMinor: 100, reference: 'Webhook test' };
    return dataOf(await stack.graphql<{ refundPayment: RefundView }>(REFUND_PAYMENT, { input }, stack.merchantKey)).refundPayment;
  }

  async function refundReads(paymentId: string): Promise<number> {
    const { requests } = await stack.sandboxJson<{ requests: { method: string; path: string }[] }>('GET', '/sandbox/requests');
    return requests.filter((request) => request.method === 'GET' && request.path.startsWith(`/v3/payments/${paymentId}/refunds/`)).length;
  }

  it('refuses every forged or malformed data notification with its status, and publishes none of them', async () => {
    const task = await startTask();
    const subscriber = connectWs(stack.gateway.url, session).subscribe<{ dataTaskUpdated: Task }>(UPDATED, { id: task.id });
    expect((await subscriber.next()).data!.dataTaskUpdated.status).toBe('QUEUED');
    const before = { ...webhooks().stats, refused: { ...webhooks().stats.refused } };
    const body = dataBody(task.id);
    const other = generateSigningKey();

    // Not signed; signed by a key the JWKS does not hold; tampered after signing; a stale (replayed) timestamp.
    expect((await post({ url: task.webhookUrl, headers: { 'content-type': 'application/json' }, body: Buffer.from(body) })).status).toBe(401);
    expect((await post(signedDelivery(task.webhookUrl, body, { ...signer(), privateKey: other.privateKey }))).status).toBe(401);
    const tampered = signedDelivery(task.webhookUrl, body, signer());
    expect((await post({ ...tampered, body: Buffer.from(body.replace('succeeded', 'Succeeded')) })).status).toBe(401);
    const stale = new Date(Date.now() - 10 * 60 * 1000).toISOString();
    expect((await post(signedDelivery(task.webhookUrl, body, { ...signer(), timestamp: stale }))).status).toBe(401);
    // The timestamp must be covered by the signature, or it proves nothing.
    expect((await post(signedDelivery(task.webhookUrl, body, { ...signer(), signedHeaders: [] }))).status).toBe(401);
    // A valid signature, but its jku is not on the allow-list: refused without ever fetching that JWKS.
    const rogueSigned = await post(signedDelivery(task.webhookUrl, body, { jku: rogue.url, kid: rogue.kid, privateKey: rogue.privateKey }));
    expect(rogueSigned.status).toBe(401);
    expect(rogueSigned.body.error.code).toBe('UNAUTHENTICATED');
    expect(rogue.fetches).toBe(0);
    // An unknown kid at an allowed jku: one re-fetch at most, then refused.
    const fetchesBefore = jwks.fetches;
    expect((await post(signedDelivery(task.webhookUrl, body, { ...signer(), kid: 'no-such-kid' }))).status).toBe(401);
    expect((await post(signedDelivery(task.webhookUrl, body, { ...signer(), kid: 'no-such-kid' }))).status).toBe(401);
    expect(jwks.fetches - fetchesBefore).toBeLessThanOrEqual(1);

    // Properly signed, but not acceptable.
    const huge = JSON.stringify({ task_id: task.id, status: 'succeeded', padding: 'x'.repeat(100 * 1024) });
    expect((await post(signedDelivery(task.webhookUrl, huge, signer()))).status).toBe(413);
    expect((await post(signedDelivery(task.webhookUrl, '{"task_id": "', signer()))).status).toBe(400);
    expect((await post(signedDelivery(task.webhookUrl, '["not", "an", "object"]', signer()))).status).toBe(400);
    expect((await post(signedDelivery(task.webhookUrl, JSON.stringify({ status: 'succeeded' }), signer()))).status).toBe(400);
    const unknownToken = `${stack.gateway.url}/webhooks/data/${'A'.repeat(43)}`;
    const notFound = await post(signedDelivery(unknownToken, body, signer()));
    expect(notFound.status).toBe(404);
    expect(notFound.body.error.code).toBe('NOT_FOUND');
    expect((await post(signedDelivery(`${stack.gateway.url}/webhooks/data/short`, body, signer()))).status).toBe(404);
    const unknownStatus = await post(signedDelivery(task.webhookUrl, dataBody(task.id, 'paused'), signer()));
    expect(unknownStatus).toEqual({ status: 202, body: { status: 'ignored' } });
    expect((await fetch(task.webhookUrl)).status).toBe(405);

    // Nothing was recorded or published: the task is still QUEUED, the inbox has no entry, and the subscriber's
    // next message is the sandbox's real notification, sent only now.
    expect(dataOf(await stack.graphql<{ dataTask: Task }>(TASK, { id: task.id }, session)).dataTask.status).toBe('QUEUED');
    expect(await webhooks().inbox.get('data', `${task.id}:SUCCEEDED`)).toBeUndefined();
    expect(webhooks().stats).toMatchObject({ accepted: before.accepted, published: before.published, ignored: before.ignored + 1 });
    expect(webhooks().stats.refused).toEqual({
      ...before.refused,
      401: (before.refused[401] ?? 0) + 8,
      413: (before.refused[413] ?? 0) + 1,
      400: (before.refused[400] ?? 0) + 3,
      404: (before.refused[404] ?? 0) + 2,
      405: (before.refused[405] ?? 0) + 1,
    });
    await advanceSandboxClock(stack, 1);
    const next = (await subscriber.next()).data!.dataTaskUpdated;
    expect(next).toMatchObject({ id: task.id, status: 'SUCCEEDED' });
    expect(next.accounts!.length).toBeGreaterThan(0);
    await expect(subscriber.ended).resolves.toEqual({ completed: true });
    expect(subscriber.results).toHaveLength(2);
    expect(await webhooks().inbox.get('data', `${task.id}:SUCCEEDED`)).toMatchObject({ source: 'data', type: 'succeeded', body: { task_id: task.id } });
  });

  it('acknowledges a replayed data notification as a duplicate and publishes it once', async () => {
    const task = await startTask();
    const subscriber = connectWs(stack.gateway.url, session).subscribe<{ dataTaskUpdated: Task }>(UPDATED, { id: task.id });
    expect((await subscriber.next()).data!.dataTaskUpdated.status).toBe('QUEUED');
    const delivery = signedDelivery(task.webhookUrl, dataBody(task.id), signer());
    const published = webhooks().stats.published;
    expect(await post(delivery)).toEqual({ status: 200, body: { status: 'accepted' } });
    expect(await post(delivery)).toEqual({ status: 200, body: { status: 'duplicate' } });
    // Re-signed with a fresh timestamp, it is still the same event.
    expect(await post(signedDelivery(task.webhookUrl, dataBody(task.id), signer()))).toEqual({ status: 200, body: { status: 'duplicate' } });
    expect((await subscriber.next()).data!.dataTaskUpdated.status).toBe('SUCCEEDED');
    await subscriber.ended;
    await webhooks().idle();
    expect(webhooks().stats.published).toBe(published + 1);
    expect(subscriber.results).toHaveLength(2);
  });

  it('marks a task FAILED on a failure notification, and a late success does not undo it', async () => {
    const task = await startTask();
    const subscriber = connectWs(stack.gateway.url, session).subscribe<{ dataTaskUpdated: Task }>(UPDATED, { id: task.id });
    expect((await subscriber.next()).data!.dataTaskUpdated.status).toBe('QUEUED');
    expect((await post(signedDelivery(task.webhookUrl, dataBody(task.id, 'failed'), signer()))).status).toBe(200);
    const failed = (await subscriber.next()).data!.dataTaskUpdated;
    expect(failed).toMatchObject({ status: 'FAILED', accounts: null });
    expect(failed.completedAt).toEqual(expect.any(String));
    await expect(subscriber.ended).resolves.toEqual({ completed: true });

    expect((await post(signedDelivery(task.webhookUrl, dataBody(task.id, 'succeeded'), signer()))).status).toBe(200);
    expect(dataOf(await stack.graphql<{ dataTask: Task }>(TASK, { id: task.id }, session)).dataTask.status).toBe('FAILED');
  });

  it('refuses forged and malformed refund events, ignores unknown types, and drops a replayed event', async () => {
    const [payment] = paymentsIn(seeded, 'settled', 1);
    const refund = await refundOf(payment!.id);
    const subscriber = connectWs(stack.gateway.url, stack.merchantKey).subscribe<{ refundUpdated: RefundView }>(REFUND_UPDATED, {
      paymentId: payment!.id,
      refundId: refund.id,
    });
    expect((await subscriber.next()).data!.refundUpdated.status).toBe('AUTHORIZED');
    const event = (eventId: string, overrides: Record<string, unknown> = {}): string =>
      JSON.stringify({
        type: 'refund_executed',
        event_id: eventId,
        event_version: 1,
        payment_id: payment!.id,
        refund_id: refund.id,
        executed_at: new Date().toISOString(),
        ...overrides,
      });
    const readsBefore = await refundReads(payment!.id);
    const refused = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];

    expect((await post(signedDelivery(paymentsUrl(), event(refused[0]!), { ...signer(), privateKey: generateSigningKey().privateKey }))).status).toBe(401);
    expect((await post(signedDelivery(paymentsUrl(), event(refused[1]!), { jku: rogue.url, kid: rogue.kid, privateKey: rogue.privateKey }))).status).toBe(401);
    expect(rogue.fetches).toBe(0);
    expect((await post(signedDelivery(paymentsUrl(), event(refused[2]!, { padding: 'x'.repeat(70 * 1024) }), signer()))).status).toBe(413);
    expect((await post(signedDelivery(paymentsUrl(), `{"type": "refund_executed", "event_id": "${refused[3]}"`, signer()))).status).toBe(400);
    expect((await post(signedDelivery(paymentsUrl(), event(refused[3]!, { refund_id: undefined }), signer()))).status).toBe(400);
    expect((await post(signedDelivery(paymentsUrl(), event(refused[3]!, { payment_id: 'not-a-uuid' }), signer()))).status).toBe(400);
    expect((await post(signedDelivery(paymentsUrl(), event(refused[3]!, { event_id: '' }), signer()))).status).toBe(400);
    expect(await post(signedDelivery(paymentsUrl(), event(refused[3]!, { type: 'refund_disputed' }), signer()))).toEqual({
      status: 202,
      body: { status: 'ignored' },
    });
    for (const eventId of refused) expect(await webhooks().inbox.get('payments', eventId)).toBeUndefined();
    expect(await refundReads(payment!.id)).toBe(readsBefore);

    // A genuine event is recorded, read back once and published; the same delivery again changes nothing.
    const eventId = randomUUID();
    const genuine = signedDelivery(paymentsUrl(), event(eventId), signer());
    expect(await post(genuine)).toEqual({ status: 200, body: { status: 'accepted' } });
    await webhooks().idle();
    expect(await refundReads(payment!.id)).toBe(readsBefore + 1);
    expect(await post(genuine)).toEqual({ status: 200, body: { status: 'duplicate' } });
    await webhooks().idle();
    expect(await refundReads(payment!.id)).toBe(readsBefore + 1);
    expect(await webhooks().inbox.get('payments', eventId)).toMatchObject({ source: 'payments', type: 'refund_executed', eventId });

    // The refund has not really executed (its state was re-read, AUTHORIZED, and nothing new was sent); when it
    // does, the sandbox's own event brings EXECUTED as the subscriber's very next message.
    await advanceSandboxClock(stack, 61);
    expect((await subscriber.next()).data!.refundUpdated).toMatchObject({ id: refund.id, status: 'EXECUTED' });
    expect(subscriber.results).toHaveLength(2);
  });

  it('re-fetches the JWKS once when a delivery names a new kid (key rotation)', async () => {
    const rotated = jwks.addKey('test-webhooks-2');
    const fetchesBefore = jwks.fetches;
    await waitFor(
      async () => {
        // The cache re-fetches at most once per interval (a provider's retries, 1 s to 8 s apart, outlast it).
        const answer = await post(signedDelivery(paymentsUrl(), JSON.stringify({ type: 'refund_noted', event_id: randomUUID() }), { ...signer(), ...rotated }));
        return answer.status === 202 ? answer : undefined;
      },
      'a delivery signed with the rotated key to be accepted',
      5_000,
      100,
    );
    expect(jwks.fetches - fetchesBefore).toBe(1);
  });
});
