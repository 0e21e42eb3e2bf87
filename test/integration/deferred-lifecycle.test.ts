import { deferredOver, streamDeferred, type DeferredError, type DeferredPayload, type DeferTransport } from '../helpers/deferred-client';
import { fixtures, injectFault, user } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';

/*
 * A deferred operation's life past its first payload, on every transport: ended by a revocation, by its deadline,
 * by its client going away; its errors masked with request ids; the rate limit. The part that matters waits on a
 * slow provider route (a sandbox fault's latency). The provider's answers are cached a few seconds per user and
 * call, so each case reads an account no other case has read.
 */

const SLOW_BALANCE = `query SlowBalance($id: ID!) {
  viewer { id ... @defer(label: "balance") { account(id: $id) { balance { current } } } }
}`;
const TRANSPORTS: DeferTransport[] = ['http', 'ws', 'sse'];

interface LoggedRequest {
  method: string;
  path: string;
  status?: number;
}

const allErrors = (payloads: DeferredPayload[]): DeferredError[] =>
  payloads.flatMap((payload) => [...(payload.errors ?? []), ...(payload.incremental ?? []).flatMap((part) => part.errors ?? [])]);

describe('a deferred operation past its first payload', () => {
  let stack: Stack;

  beforeAll(async () => {
    // The request id case fails the same route over three transports: the breaker, which would answer the later
    // ones itself (no providerError), has its own tests.
    stack = await startStack({ env: { RATE_LIMIT_PER_SECOND: '0', PROVIDER_BREAKER_FAILURES: '100' } });
  });

  afterEach(async () => {
    await stack.sandboxJson('DELETE', '/sandbox/faults');
  });

  afterAll(async () => {
    await stack?.close();
  });

  /** A fresh session of `username` and the provider id of its account number `index`. */
  async function accountOf(username: string, index: number): Promise<{ token: string; accountId: string }> {
    const token = await stack.signIn(username, 'doe');
    return { token, accountId: user(await fixtures(stack), username).accounts[index]!.account.account_id };
  }

  const requests = async (): Promise<LoggedRequest[]> => (await stack.sandboxJson<{ requests: LoggedRequest[] }>('GET', '/sandbox/requests')).requests;
  const logout = (token: string): Promise<Response> =>
    fetch(`${stack.gateway.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });

  it('ends a WebSocket operation whose session logs out while its deferred part waits: the socket closes saying why', async () => {
    const { token, accountId } = await accountOf('jane', 0);
    await injectFault(stack, { match: `GET /data/v1/accounts/${accountId}/balance`, latencyMs: 5_000 });
    const live = streamDeferred('ws', stack.gateway.url, { query: SLOW_BALANCE, variables: { id: accountId } }, token);
    expect(await live.next()).toMatchObject({ hasNext: true, data: { viewer: { id: expect.any(String) } } });
    expect((await logout(token)).status).toBe(204);
    expect(await live.ended).toEqual({ completed: false, close: { code: 4401, reason: 'Unauthorized: the session was logged out' } });
    expect(live.payloads).toHaveLength(1);
  });

  it.each([['sse'], ['http']] as const)(
    'ends a %s operation whose session logs out while its deferred part waits: its last payload says why',
    async (transport) => {
      const { token, accountId } = await accountOf(transport === 'sse' ? 'jane' : 'lee', transport === 'sse' ? 1 : 0);
      await injectFault(stack, { match: `GET /data/v1/accounts/${accountId}/balance`, latencyMs: 5_000 });
      const live = streamDeferred(transport, stack.gateway.url, { query: SLOW_BALANCE, variables: { id: accountId } }, token);
      expect(await live.next()).toMatchObject({ hasNext: true, data: { viewer: { id: expect.any(String) } } });
      expect((await logout(token)).status).toBe(204);
      expect(await live.ended).toEqual({ completed: true });
      expect(live.payloads).toHaveLength(2);
      const last = live.payloads[1]!;
      expect(last.incremental).toBeUndefined();
      expect(last.errors).toEqual([
        expect.objectContaining({
          message: 'This stream was closed: Unauthorized: the session was logged out.',
          extensions: expect.objectContaining({ code: 'UNAUTHENTICATED', requestId: expect.any(String) }),
        }),
      ]);
      // Multipart's last part ends the operation for a deferSpec client; SSE ends it with its `complete` event.
      if (transport === 'http') expect(last.hasNext).toBe(false);
    },
  );

  it.each(TRANSPORTS)(
    'over %s, a client that goes away while a deferred part waits cancels its provider calls: the slow call is cut, the calls after it never made',
    async (transport) => {
      const token = await stack.signIn({ http: 'john', ws: 'jane', sse: 'cara' }[transport], 'doe');
      // The deferred card list is slow; each card's balance is read only once it has come.
      const query = 'query Chain { viewer { id ... @defer(label: "cards") { cards { id balance { current } } } } }';
      await stack.sandboxJson('DELETE', '/sandbox/requests');
      await injectFault(stack, { match: 'GET /data/v1/cards', latencyMs: 1_500 });
      await injectFault(stack, { match: 'GET /data/v1/probe', latencyMs: 2_500 });
      const live = streamDeferred(transport, stack.gateway.url, { query }, token);
      expect((await live.next()).hasNext).toBe(true);
      await waitFor(async () => ((await requests()).some((request) => request.path === '/data/v1/cards') ? true : undefined), 'the slow card list call');
      live.close();
      // A call of the test's own, answered well after the card list would have been: had the gateway not cut it,
      // the card balances would have been asked for by then.
      await fetch(`${stack.sandbox.url}/data/v1/probe`);
      const seen = await requests();
      const lists = seen.filter((request) => request.path === '/data/v1/cards');
      expect(lists).toHaveLength(1);
      // The sandbox records a status once its answer is sent; the gateway hung up before that.
      expect(lists[0]!.status).toBeUndefined();
      expect(seen.filter((request) => /^\/data\/v1\/cards\/[^/]+\/balance$/.test(request.path))).toEqual([]);
    },
  );

  it("puts the request id on every payload's errors and masks what the provider said", async () => {
    const token = await stack.signIn('john', 'doe');
    const [first, later] = user(await fixtures(stack), 'john').accounts.map((account) => account.account.account_id);
    const secret = { error: 'server_error', error_description: 'db at 10.0.0.7 refused user bank_ro password hunter2' };
    for (const id of [first, later]) await injectFault(stack, { match: `GET /data/v1/accounts/${id}/balance`, status: 500, body: secret });
    const query = `query TwoBalances($first: ID!, $later: ID!) {
      viewer { now: account(id: $first) { balance { current } } ... @defer(label: "later") { later: account(id: $later) { balance { current } } } }
    }`;
    for (const transport of TRANSPORTS) {
      const payloads = await deferredOver(transport, stack.gateway.url, { query, variables: { first, later } }, token);
      expect(payloads[0]!.errors).toHaveLength(1);
      const part = payloads.flatMap((payload) => payload.incremental ?? []).find((each) => each.label === 'later')!;
      expect(part.errors).toHaveLength(1);
      const errors = allErrors(payloads);
      expect(errors.map((error) => error.path)).toEqual([
        ['viewer', 'now', 'balance'],
        ['viewer', 'later', 'balance'],
      ]);
      const requestId = errors[0]!.extensions?.requestId;
      expect(requestId).toEqual(expect.stringMatching(/\S/));
      expect(errors.map((error) => error.extensions?.requestId)).toEqual([requestId, requestId]);
      expect(errors.map((error) => error.extensions?.code)).toEqual(['UPSTREAM_UNAVAILABLE', 'UPSTREAM_UNAVAILABLE']);
      // The provider's error code is the API's (providerError); its description and where it came from are not.
      expect(errors.map((error) => error.extensions?.providerError)).toEqual(['server_error', 'server_error']);
      const text = JSON.stringify(payloads);
      for (const detail of ['hunter2', '10.0.0.7', 'stack', stack.sandbox.url, '/data/v1/']) expect(text).not.toContain(detail);
    }
  });
});

describe('the operation deadline covers every deferred part', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_PER_SECOND: '0', OPERATION_TIMEOUT: '1s' } });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it.each(TRANSPORTS)('over %s, a deferred part slower than the deadline comes back with a timeout error, and the operation completes', async (transport) => {
    const token = await stack.signIn('john', 'doe');
    const accountId = user(await fixtures(stack), 'john').accounts[TRANSPORTS.indexOf(transport)]!.account.account_id;
    await injectFault(stack, { match: `GET /data/v1/accounts/${accountId}/balance`, latencyMs: 4_000 });
    try {
      const live = streamDeferred(transport, stack.gateway.url, { query: SLOW_BALANCE, variables: { id: accountId } }, token);
      expect(await live.ended).toEqual({ completed: true });
      const [first, ...rest] = live.payloads;
      expect(first).toMatchObject({ hasNext: true, data: { viewer: { id: expect.any(String) } } });
      expect(rest.at(-1)!.hasNext).toBe(false);
      const part = rest.flatMap((payload) => payload.incremental ?? []).find((each) => each.label === 'balance')!;
      expect(part.data).toEqual({ account: { balance: null } });
      expect(part.errors).toEqual([
        expect.objectContaining({ path: ['viewer', 'account', 'balance'], extensions: expect.objectContaining({ code: 'UPSTREAM_UNAVAILABLE' }) }),
      ]);
      // Answered at the deadline, before the provider: the sandbox has not sent its answer yet.
      const { requests } = await stack.sandboxJson<{ requests: LoggedRequest[] }>('GET', '/sandbox/requests');
      const call = requests.filter((request) => request.path === `/data/v1/accounts/${accountId}/balance`);
      expect(call).toHaveLength(1);
      expect(call[0]!.status).toBeUndefined();
    } finally {
      await stack.sandboxJson('DELETE', '/sandbox/faults');
    }
  });
});

describe('the rate limit', () => {
  let stack: Stack;

  const BURST = 10;
  const tokens: Partial<Record<DeferTransport, string>> = {};

  beforeAll(async () => {
    // A bucket that refills one token in 100 s: the test's few seconds refill none. The sign-ins spend from their
    // address's bucket, not from the users'.
    stack = await startStack({ env: { RATE_LIMIT_PER_SECOND: '0.01', RATE_LIMIT_BURST: String(BURST) } });
    // One user per transport: the limit is per user, across transports.
    for (const [transport, username] of [
      ['http', 'john'],
      ['ws', 'jane'],
      ['sse', 'lee'],
    ] as const)
      tokens[transport] = await stack.signIn(username, 'doe');
  });

  afterAll(async () => {
    await stack?.close();
  });

  it.each(TRANSPORTS)('over %s, refuses deferred operations past the burst as it refuses the others', async (transport) => {
    const token = tokens[transport];
    const query = 'query Deferred { viewer { id ... @defer { accounts { id } } } }';
    const answers = await Promise.all(Array.from({ length: BURST + 2 }, () => deferredOver(transport, stack.gateway.url, { query }, token)));
    const refused = answers.filter((payloads) => payloads[0]!.errors);
    const answered = answers.filter((payloads) => !payloads[0]!.errors);
    expect([answered.length, refused.length]).toEqual([BURST, 2]);
    for (const payloads of refused) {
      expect(payloads).toHaveLength(1);
      expect(payloads[0]!.errors?.[0]?.extensions).toMatchObject({ reason: 'RATE_LIMITED' });
    }
    for (const payloads of answered) expect(payloads.at(-1)!.hasNext).toBe(false);
    // A plain query of the same user, within the same empty bucket, is refused with the same error.
    const plain = await deferredOver(transport, stack.gateway.url, { query: '{ viewer { id } }' }, token);
    const { requestId: _plainId, ...plainExtensions } = plain[0]!.errors![0]!.extensions!;
    const { requestId: _deferredId, ...deferredExtensions } = refused[0]![0]!.errors![0]!.extensions!;
    expect({ message: plain[0]!.errors![0]!.message, ...plainExtensions }).toEqual({ message: refused[0]![0]!.errors![0]!.message, ...deferredExtensions });
  });
});
