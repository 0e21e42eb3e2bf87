import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import {
  advanceSandboxClock,
  CREATE_PAYOUT,
  dataOf,
  fixtures,
  ibanOf,
  paymentsIn,
  REFUND_PAYMENT,
  user,
  VERIFY,
  type PayoutView,
  type RefundView,
} from '../helpers/money';
import { closeHttpStreams, streamOverHttp, type HttpStream, type StreamTransport } from '../helpers/http-stream-client';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';
import { connectWs, disposeWsClients, type LiveResult } from '../helpers/ws-client';

/*
 * Subscriptions over HTTP, GraphQL over SSE (/graphql/stream) and Apollo's multipart subscriptions (/graphql with
 * the multipart Accept), each under the WebSocket's rules, read as raw streams. Sandbox time runs at 1/1000 of real
 * time: payouts and refunds move on when a test advances the sandbox clock, and data tasks stay running.
 */

const REFUND_UPDATED =
  'subscription Refunds($paymentId: ID!, $refundId: ID) { refundUpdated(paymentId: $paymentId, refundId: $refundId) { id: refundId status } }';
const PAYOUT_UPDATED = 'subscription Payout($id: ID!) { payoutUpdated(transactionId: $id) { transactionId status settledAt } }';
const START = 'mutation { startDataTask(input: { resource: ACCOUNTS }) { id } }';
const TASK_UPDATED = 'subscription Task($id: ID!) { dataTaskUpdated(id: $id) { id status } }';
const MANIFEST_ID = 'stream-refunds-1';
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** What a client reads: data, and each error's message, path and extensions but the request id. */
function seen(answer: LiveResult<unknown>): unknown {
  return {
    data: answer.data ?? null,
    errors: answer.errors?.map(({ message, path, extensions }) => {
      const { requestId: _requestId, ...rest } = (extensions ?? {}) as Record<string, unknown>;
      return { message, path, extensions: rest };
    }),
  };
}

describe.each<StreamTransport>(['sse', 'multipart'])('subscriptions over %s', (transport) => {
  const dir = mkdtempSync(join(tmpdir(), 'bankgraph-streams-'));
  const manifestPath = join(dir, 'manifest.json');
  writeFileSync(manifestPath, JSON.stringify({ [MANIFEST_ID]: REFUND_UPDATED }));
  let stack: Stack;
  let seeded: Fixtures;

  beforeAll(async () => {
    stack = await startStack({
      env: {
        SANDBOX_TIME_SCALE: '0.001',
        STREAM_HEARTBEAT_MS: '100',
        MAX_SUBSCRIPTIONS_PER_PRINCIPAL: '2',
        GRAPHQL_MAX_ALIASES: '3',
        PERSISTED_DOCUMENTS: 'allow',
        PERSISTED_DOCUMENTS_MANIFEST: manifestPath,
        ALLOWED_ORIGINS: 'https://app.example.com',
      },
      gateway: { live: { refundWatch: { initialDelayMs: 50, maxDelayMs: 200, factor: 2, leaseTtlMs: 1_000 } } },
    });
    seeded = await fixtures(stack);
  });

  afterEach(async () => {
    closeHttpStreams();
    await disposeWsClients();
  });

  afterAll(async () => {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const stream = <T>(query: string, variables?: Record<string, unknown>, token?: string, headers?: Record<string, string>): HttpStream<T> =>
    streamOverHttp<T>(transport, stack.gateway.url, query, variables, { token, headers });

  /** The same operation over a WebSocket: the answer a stream must match. */
  const overWs = (query: string, variables: Record<string, unknown>, token?: string): Promise<LiveResult<unknown>> =>
    connectWs(stack.gateway.url, token).subscribe<unknown>(query, variables).next();

  /** Refunds with the same payment, amount and reference are one refund (asked for again, not twice). */
  async function refund(paymentId: string, reference = 'Stream test'): Promise<RefundView> {
    const input = { paymentId, amountInMinor: 100, reference };
    return dataOf(await stack.graphql<{ refundPayment: RefundView }>(REFUND_PAYMENT, { input }, stack.merchantKey)).refundPayment;
  }

  async function runningTask(session: string): Promise<string> {
    return dataOf(await stack.graphql<{ startDataTask: { id: string } }>(START, {}, session)).startDataTask.id;
  }

  it('pushes a payout from authorised to settled, then completes', async () => {
    const session = await stack.signIn('john', 'doe');
    dataOf(await stack.graphql(VERIFY, { name: 'John Doe' }, session));
    const input = {
      transactionId: randomUUID(),
      beneficiaryName: 'John Doe',
      beneficiaryIban: ibanOf(user(seeded, 'john')),
      beneficiaryReference: 'Stream payout',
      amountInMinor: 1_234,
      currency: 'GBP',
    };
    const payout = dataOf(await stack.graphql<{ createPayout: PayoutView }>(CREATE_PAYOUT, { input }, session)).createPayout;
    const live = stream<{ payoutUpdated: PayoutView }>(PAYOUT_UPDATED, { id: payout.transactionId }, session);
    expect((await live.head).status).toBe(200);
    expect((await live.head).contentType).toMatch(transport === 'sse' ? /^text\/event-stream/ : /^multipart\/mixed;boundary="graphql";subscriptionSpec="1.0"/);
    expect((await live.next()).data!.payoutUpdated).toMatchObject({ transactionId: payout.transactionId, status: 'authorised' });
    await waitFor(() => stack.gateway.features.payouts.watchers.isPolling(payout.transactionId) || undefined, 'the payout watcher to start');
    await advanceSandboxClock(stack, 5);
    expect((await live.next()).data!.payoutUpdated.status).toBe('submitted');
    await advanceSandboxClock(stack, 30);
    expect((await live.next()).data!.payoutUpdated.status).toBe('settled');
    await expect(live.ended).resolves.toEqual({ completed: true });
  });

  it('pushes a refund to a merchant as its payment settles', async () => {
    const [payment] = paymentsIn(seeded, 'authorized', transport === 'sse' ? 1 : 2).slice(transport === 'sse' ? 0 : 1);
    const created = await refund(payment!.id);
    const live = stream<{ refundUpdated: RefundView }>(REFUND_UPDATED, { paymentId: payment!.id, refundId: created.id }, stack.merchantKey);
    expect((await live.next()).data!.refundUpdated).toEqual({ id: created.id, status: 'PENDING' });
    await stack.sandboxJson('POST', `/sandbox/payments/${payment!.id}/settle`);
    expect((await live.next()).data!.refundUpdated).toEqual({ id: created.id, status: 'AUTHORIZED' });
  });

  it('pushes a data task to its user, and sends heartbeats while it is idle', async () => {
    const session = await stack.signIn('john', 'doe');
    const id = await runningTask(session);
    const live = stream<{ dataTaskUpdated: { id: string; status: string } }>(TASK_UPDATED, { id }, session);
    expect((await live.next()).data!.dataTaskUpdated).toMatchObject({ id });
    await waitFor(() => (live.heartbeats() >= 2 ? true : undefined), 'two heartbeats');
    expect(live.results).toHaveLength(1);
  });

  it('refuses nobody signed in and another user as the WebSocket does', async () => {
    const john = await stack.signIn('john', 'doe');
    const lee = await stack.signIn('lee', 'doe');
    const id = await runningTask(john);
    for (const token of [undefined, lee]) {
      const live = stream(TASK_UPDATED, { id }, token);
      const answer = await live.next();
      expect(answer.errors?.[0]?.extensions?.code).toEqual(token ? expect.stringMatching(/FORBIDDEN|NOT_FOUND/) : 'UNAUTHENTICATED');
      expect(answer.errors?.[0]?.extensions?.requestId).toBe((await live.head).requestId);
      expect(seen(answer)).toEqual(seen(await overWs(TASK_UPDATED, { id }, token)));
      expect((await live.ended).completed).toBe(true);
    }
  });

  it('refuses a session cookie from a foreign Origin (403), and takes it from the gateway origin or ALLOWED_ORIGINS', async () => {
    const session = await stack.signIn('john', 'doe');
    const id = await runningTask(session);
    const cookie = `bankgraph_session=${session}`;
    const foreign = stream(TASK_UPDATED, { id }, undefined, { cookie, origin: 'http://evil.example' });
    expect((await foreign.head).status).toBe(403);
    expect((await foreign.next()).errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN', reason: 'FOREIGN_ORIGIN' } });
    for (const origin of [new URL(stack.gateway.url).origin, 'https://app.example.com']) {
      const own = stream<{ dataTaskUpdated: { id: string } }>(TASK_UPDATED, { id }, undefined, { cookie, origin });
      expect((await own.next()).data!.dataTaskUpdated.id).toBe(id);
      own.close();
    }
    // A bearer token proves itself whatever the page: no origin check.
    const bearer = stream<{ dataTaskUpdated: { id: string } }>(TASK_UPDATED, { id }, session, { cookie, origin: 'http://evil.example' });
    expect((await bearer.next()).data!.dataTaskUpdated.id).toBe(id);
  });

  it('refuses a subscription past the operation limits and one that does not validate, as the WebSocket does', async () => {
    const aliased = 'subscription ($id: ID!) { dataTaskUpdated(id: $id) { a: id b: id c: id d: id } }';
    const invalid = 'subscription ($id: ID!) { dataTaskUpdated(id: $id) { nope } }';
    for (const [query, reason] of [
      [aliased, 'OPERATION_LIMIT'],
      [invalid, 'GRAPHQL_VALIDATION_FAILED'],
    ] as const) {
      const answer = await stream(query, { id: 'x' }, stack.merchantKey).next();
      expect(answer.errors?.[0]?.extensions?.reason).toBe(reason);
      expect(seen(answer)).toEqual(seen(await overWs(query, { id: 'x' }, stack.merchantKey)));
    }
  });

  it('runs a persisted document by its id and by its APQ hash, and refuses an unknown one as the WebSocket does', async () => {
    const [payment] = paymentsIn(seeded, 'settled');
    const created = await refund(payment!.id);
    const variables = { paymentId: payment!.id, refundId: created.id };
    const byId = streamOverHttp<{ refundUpdated: RefundView }>(transport, stack.gateway.url, '', variables, {
      token: stack.merchantKey,
      body: { documentId: MANIFEST_ID },
    });
    expect((await byId.next()).data!.refundUpdated.id).toBe(created.id);
    byId.close();
    const persistedQuery = { version: 1, sha256Hash: sha256(REFUND_UPDATED) };
    // Taught by its text over HTTP first, then run from the hash alone over the stream.
    const taught = streamOverHttp(transport, stack.gateway.url, REFUND_UPDATED, variables, {
      token: stack.merchantKey,
      body: { extensions: { persistedQuery } },
    });
    expect((await taught.next()).errors).toBeUndefined();
    taught.close();
    const byHash = streamOverHttp<{ refundUpdated: RefundView }>(transport, stack.gateway.url, '', variables, {
      token: stack.merchantKey,
      body: { extensions: { persistedQuery } },
    });
    expect((await byHash.next()).data!.refundUpdated.id).toBe(created.id);
    byHash.close();
    const unknown = await streamOverHttp(transport, stack.gateway.url, '', variables, {
      token: stack.merchantKey,
      body: { documentId: 'no-such-document' },
    }).next();
    expect(unknown.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  it('counts its subscriptions with the WebSocket’s against MAX_SUBSCRIPTIONS_PER_PRINCIPAL', async () => {
    const session = await stack.signIn('lee', 'doe');
    const id = await runningTask(session);
    const ws = connectWs(stack.gateway.url, session).subscribe(TASK_UPDATED, { id });
    expect((await ws.next()).errors).toBeUndefined();
    const first = stream(TASK_UPDATED, { id }, session);
    expect((await first.next()).errors).toBeUndefined();
    const past = await stream(TASK_UPDATED, { id }, session).next();
    expect(past.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'SUBSCRIPTION_LIMIT', limit: 'MAX_SUBSCRIPTIONS_PER_PRINCIPAL', max: 2 });
    const wsPast = await connectWs(stack.gateway.url, session).subscribe(TASK_UPDATED, { id }).next();
    expect(wsPast.errors?.[0]?.extensions).toMatchObject({ reason: 'SUBSCRIPTION_LIMIT' });
    // Closing the stream gives its place back.
    first.close();
    await waitFor(async () => ((await stream(TASK_UPDATED, { id }, session).next()).errors ? undefined : true), 'the place to be given back');
  });

  it.each([
    ['a logout', async (session: string) => fetch(`${stack.gateway.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${session}` } })],
    [
      'revokeUser',
      async (session: string) => {
        const { viewer } = dataOf(await stack.graphql<{ viewer: { id: string } }>('{ viewer { id } }', {}, session));
        return stack.graphql('mutation ($id: ID!) { revokeUser(userId: $id) }', { id: viewer.id }, stack.merchantKey);
      },
    ],
  ])('ends the stream within a second of %s, saying why', async (_what, revoke) => {
    const session = await stack.signIn('sam', 'doe');
    const id = await runningTask(session);
    const live = stream(TASK_UPDATED, { id }, session);
    expect((await live.next()).errors).toBeUndefined();
    await revoke(session);
    const started = performance.now();
    const ended = await live.ended;
    expect(performance.now() - started).toBeLessThan(1_000);
    const last = live.results.at(-1)!;
    expect(last.errors?.[0]).toMatchObject({
      message: expect.stringMatching(/^This stream was closed: Unauthorized: /),
      extensions: { code: 'UNAUTHENTICATED' },
    });
    expect(ended).toMatchObject(
      transport === 'sse'
        ? { completed: true }
        : { completed: false, terminal: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) })] },
    );
  });

  it('sends a burst of changes to every stream of one operation in the same order, each refund only forward', async () => {
    const [payment] = paymentsIn(seeded, 'authorized', 3).slice(2);
    const first = await refund(payment!.id);
    const streams = [0, 1].map(() => stream<{ refundUpdated: RefundView }>(REFUND_UPDATED, { paymentId: payment!.id }, stack.merchantKey));
    for (const live of streams) expect((await live.next()).data!.refundUpdated).toEqual({ id: first.id, status: 'PENDING' });
    const more = await Promise.all([1, 2, 3].map((n) => refund(payment!.id, `Stream burst ${n}`)));
    await stack.sandboxJson('POST', `/sandbox/payments/${payment!.id}/settle`);
    const seenBy = await Promise.all(
      streams.map(async (live) => {
        // The three new refunds pending, then all four authorized.
        for (let taken = 1; taken < 8; taken++) await live.next();
        return live.results.map((result) => result.data!.refundUpdated);
      }),
    );
    expect(seenBy[1]).toEqual(seenBy[0]);
    for (const { id } of [first, ...more]) {
      expect(seenBy[0]!.filter((change) => change.id === id).map((change) => change.status)).toEqual(['PENDING', 'AUTHORIZED']);
    }
  });
});

describe("GraphQL over SSE, the protocol's other forms", () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { SANDBOX_TIME_SCALE: '0.001' } });
  });

  afterAll(async () => {
    await stack?.close();
  });

  /** The events of a whole (finite) SSE response. */
  async function eventsOf(response: Response): Promise<{ event: string; data: unknown }[]> {
    const text = await response.text();
    return text
      .split('\n\n')
      .filter((block) => block.startsWith('event: '))
      .map((block) => ({ event: /^event: (.*)$/m.exec(block)![1]!, data: JSON.parse(/^data:(.*)$/m.exec(block)![1]!.trim() || 'null') as unknown }));
  }

  const get = (params: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${stack.gateway.url}/graphql/stream?${new URLSearchParams(params)}`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${stack.merchantKey}`, ...headers },
    });

  it('answers a query sent by GET as one next event, then complete', async () => {
    const response = await get({ query: 'query Q { __typename }' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await eventsOf(response)).toEqual([
      { event: 'next', data: { data: { __typename: 'Query' } } },
      { event: 'complete', data: null },
    ]);
  });

  it('runs no mutation sent by GET', async () => {
    const events = await eventsOf(await get({ query: 'mutation { revokeUser(userId: "u-1") }' }));
    expect(events[0]).toMatchObject({ event: 'next', data: { errors: [{ extensions: { code: 'FORBIDDEN' } }] } });
    expect((events[0]!.data as { data?: unknown }).data).toBeUndefined();
  });

  it('says what it serves to a request without Accept: text/event-stream (406)', async () => {
    const response = await get({ query: '{ __typename }' }, { accept: 'application/json' });
    expect(response.status).toBe(406);
    const { errors } = (await response.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
    expect(errors[0]!.message).toMatch(/Accept: text\/event-stream/);
    expect(errors[0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', requestId: response.headers.get('x-request-id') });
  });
});

describe('HTTP subscription streams and shutdown', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { SANDBOX_TIME_SCALE: '0.001' } });
  });

  afterAll(async () => {
    closeHttpStreams();
    await stack?.close();
  });

  it('ends every SSE and multipart stream when the gateway closes, and the gateway closes promptly', async () => {
    const session = await stack.signIn('john', 'doe');
    const id = dataOf(await stack.graphql<{ startDataTask: { id: string } }>(START, {}, session)).startDataTask.id;
    const streams = (['sse', 'multipart'] as const).map((transport) => streamOverHttp(transport, stack.gateway.url, TASK_UPDATED, { id }, { token: session }));
    for (const live of streams) expect((await live.next()).errors).toBeUndefined();
    const started = performance.now();
    await stack.gateway.close();
    expect(performance.now() - started).toBeLessThan(stack.config.limits.shutdownTimeoutMs / 2);
    for (const live of streams) await expect(live.ended).resolves.toEqual({ completed: true });
  });
});
