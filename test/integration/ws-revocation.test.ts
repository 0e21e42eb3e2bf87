import type { IdentityEvent } from '../../src/identity/identity-events';
import { sessionKey } from '../../src/identity/session.store';
import { holdNextSessionLookup } from '../helpers/hold-lookup';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';
import { connectWs, disposeWsClients, type LiveSubscription } from '../helpers/ws-client';

/*
 * A socket's owner is looked up on its first operation; were the socket registered for closing only after the lookup
 * answered, a logout or revokeUser landing in between would close nothing. Here the lookup is held (the store has
 * answered; the answer is not yet back) until the revocation has been announced.
 */

const VIEWER = '{ viewer { id } }';
const START = 'mutation { startDataTask(input: { resource: ACCOUNTS }) { id } }';
const TASK_UPDATED = 'subscription ($id: ID!) { dataTaskUpdated(id: $id) { id status } }';

/** How the socket under a subscription closed: its close code and reason. */
async function closeOf(live: LiveSubscription<unknown>): Promise<{ code?: number; reason?: string }> {
  const { error } = await live.ended;
  const { code, reason } = (error ?? {}) as { code?: number; reason?: string };
  return { code, reason };
}

describe('WebSockets and revocation (one instance)', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      // Data tasks take a sandbox second: a thousand real ones, so subscriptions stay open for the test.
      env: { SANDBOX_TIME_SCALE: '0.001', WS_PRINCIPAL_RECHECK_MS: '100', SESSION_IDLE_TIMEOUT: '2s' },
    });
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await disposeWsClients();
  });

  afterAll(async () => {
    await stack?.close();
  });

  const userIdOf = async (session: string): Promise<string> => (await stack.graphql<{ viewer: { id: string } }>(VIEWER, {}, session)).data!.viewer.id;

  it('closes a socket whose first lookup was under way when its session logged out, and runs none of its operations', async () => {
    const session = await stack.signIn('john', 'doe');
    const held = holdNextSessionLookup(stack.gateway.features.identity.sessions);
    const query = connectWs(stack.gateway.url, session).subscribe<{ viewer: { id: string } }>(VIEWER);
    await held.reached;
    const loggedOut = await fetch(`${stack.gateway.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${session}` } });
    expect(loggedOut.status).toBe(204);
    held.release();
    expect(await closeOf(query)).toEqual({ code: 4401, reason: 'Unauthorized: the session was logged out' });
    expect(query.results.filter((result) => result.data)).toEqual([]);
  });

  it('closes a socket whose first lookup was under way when its user was revoked, and runs none of its operations', async () => {
    const session = await stack.signIn('lee', 'doe');
    const userId = await userIdOf(session);
    const held = holdNextSessionLookup(stack.gateway.features.identity.sessions);
    const query = connectWs(stack.gateway.url, session).subscribe<{ viewer: { id: string } }>(VIEWER);
    await held.reached;
    const revoked = await stack.graphql('mutation ($id: ID!) { revokeUser(userId: $id) }', { id: userId }, stack.merchantKey);
    expect(revoked.data).toEqual({ revokeUser: true });
    held.release();
    const { code, reason } = await closeOf(query);
    expect(code).toBe(4401);
    expect(reason).toMatch(/^Unauthorized: /);
    expect(query.results.filter((result) => result.data)).toEqual([]);
  });

  it('answers UNAUTHENTICATED to an HTTP operation whose lookup was under way when its session logged out', async () => {
    const session = await stack.signIn('john', 'doe');
    const held = holdNextSessionLookup(stack.gateway.features.identity.sessions);
    const answer = stack.graphql(VIEWER, {}, session);
    await held.reached;
    await fetch(`${stack.gateway.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${session}` } });
    held.release();
    const { data, errors } = await answer;
    expect(data ?? null).toBeNull();
    expect(errors![0]!.extensions!.code).toBe('UNAUTHENTICATED');
  });

  it('closes, at the periodic check, a socket whose session has passed its end', async () => {
    const session = await stack.signIn('john', 'doe');
    const task = await stack.graphql<{ startDataTask: { id: string } }>(START, {}, session);
    const live = connectWs(stack.gateway.url, session).subscribe(TASK_UPDATED, { id: task.data!.startDataTask.id });
    expect((await live.next()).errors).toBeUndefined();
    // As if its 30 days had run out: no event announces that, only the store knows.
    await stack.gateway.database.db
      .updateTable('sessions')
      .set({ expiresAtMs: Date.now() - 1 })
      .where('key', '=', sessionKey(session))
      .execute();
    expect(await closeOf(live)).toEqual({ code: 4401, reason: 'Unauthorized: the session has ended (expired, idle, logged out or revoked)' });
  });

  it('ends a session unused for SESSION_IDLE_TIMEOUT, and its socket with it; a session in use stays', async () => {
    const idle = await stack.signIn('john', 'doe');
    const busy = await stack.signIn('jane', 'doe');
    const task = await stack.graphql<{ startDataTask: { id: string } }>(START, {}, idle);
    const live = connectWs(stack.gateway.url, idle).subscribe(TASK_UPDATED, { id: task.data!.startDataTask.id });
    expect((await live.next()).errors).toBeUndefined();
    const opened = performance.now();
    // Used every 300 ms for longer than the idle timeout (2 s): each use moves its end.
    let busyAnswers = 0;
    while (!live.isEnded() && performance.now() - opened < 4_000) {
      const answer = await stack.graphql(VIEWER, {}, busy);
      expect(answer.errors).toBeUndefined();
      busyAnswers += 1;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(await closeOf(live)).toEqual({ code: 4401, reason: 'Unauthorized: the session has ended (expired, idle, logged out or revoked)' });
    // Closed once idle for 2 s (with the check every 100 ms and "last used" refreshed every 200 ms), not before.
    expect(performance.now() - opened).toBeGreaterThan(1_500);
    expect(busyAnswers).toBeGreaterThan(4);
    expect((await stack.graphql(VIEWER, {}, idle)).errors![0]!.extensions!.code).toBe('UNAUTHENTICATED');
    expect((await stack.graphql(VIEWER, {}, busy)).errors).toBeUndefined();
  });

  it('hands an identity event to the publishing instance at once, before the bus carries it', async () => {
    const heard: IdentityEvent[] = [];
    const stop = await stack.gateway.features.identity.identityEvents.listen((event) => heard.push(event));
    try {
      const session = await stack.signIn('john', 'doe');
      await stack.gateway.features.identity.identityEvents.publish({ kind: 'logout', userId: 'user_x', sessionKey: sessionKey(session) });
      // Heard once at once, once more from the bus (the memory bus delivers on a later tick, before publish resolves).
      expect(heard.filter((event) => event.kind === 'logout')).toHaveLength(2);
    } finally {
      await stop();
    }
  });
});

describe('caps on live work (one instance)', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      env: { SANDBOX_TIME_SCALE: '0.001', WS_MAX_SUBSCRIPTIONS_PER_SOCKET: '2', MAX_SUBSCRIPTIONS_PER_PRINCIPAL: '3', WS_MAX_SOCKETS_PER_PRINCIPAL: '2' },
    });
  });

  afterEach(async () => {
    await disposeWsClients();
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('refuses a subscription past the per-socket cap and past the per-principal cap, naming the limit and its value', async () => {
    const session = await stack.signIn('john', 'doe');
    const id = (await stack.graphql<{ startDataTask: { id: string } }>(START, {}, session)).data!.startDataTask.id;
    const first = connectWs(stack.gateway.url, session);
    for (let index = 0; index < 2; index += 1) expect((await first.subscribe(TASK_UPDATED, { id }).next()).errors).toBeUndefined();
    const third = first.subscribe(TASK_UPDATED, { id });
    expect((await third.next()).errors).toEqual([
      {
        message: 'Too many subscriptions on this WebSocket: at most 2 (WS_MAX_SUBSCRIPTIONS_PER_SOCKET); complete one before starting another.',
        extensions: { code: 'FORBIDDEN', reason: 'SUBSCRIPTION_LIMIT', limit: 'WS_MAX_SUBSCRIPTIONS_PER_SOCKET', max: 2, requestId: expect.any(String) },
      },
    ]);

    const second = connectWs(stack.gateway.url, session);
    expect((await second.subscribe(TASK_UPDATED, { id }).next()).errors).toBeUndefined();
    const fourth = second.subscribe(TASK_UPDATED, { id });
    expect((await fourth.next()).errors).toEqual([
      {
        message:
          'Too many subscriptions for this principal on this gateway instance: at most 3 (MAX_SUBSCRIPTIONS_PER_PRINCIPAL); complete one before starting another.',
        extensions: { code: 'FORBIDDEN', reason: 'SUBSCRIPTION_LIMIT', limit: 'MAX_SUBSCRIPTIONS_PER_PRINCIPAL', max: 3, requestId: expect.any(String) },
      },
    ]);

    // Another user has allowances of their own; and a subscription that ends gives its place back.
    const other = await stack.signIn('jane', 'doe');
    const otherId = (await stack.graphql<{ startDataTask: { id: string } }>(START, {}, other)).data!.startDataTask.id;
    expect((await connectWs(stack.gateway.url, other).subscribe(TASK_UPDATED, { id: otherId }).next()).errors).toBeUndefined();
    await first.dispose();
    const again = await waitFor(async () => {
      const attempt = second.subscribe(TASK_UPDATED, { id });
      const result = await attempt.next();
      return result.errors ? undefined : result;
    }, 'a place freed by the closed socket');
    expect(again.data).toBeTruthy();
  });

  it('closes a socket past WS_MAX_SOCKETS_PER_PRINCIPAL with 1008 and a reason that names the limit', async () => {
    const session = await stack.signIn('sam', 'doe');
    const id = (await stack.graphql<{ startDataTask: { id: string } }>(START, {}, session)).data!.startDataTask.id;
    for (let index = 0; index < 2; index += 1)
      expect((await connectWs(stack.gateway.url, session).subscribe(TASK_UPDATED, { id }).next()).errors).toBeUndefined();
    const third = connectWs(stack.gateway.url, session).subscribe(TASK_UPDATED, { id });
    expect(await closeOf(third)).toEqual({
      code: 1008,
      reason: 'Too many WebSockets: at most 2 per principal on this instance (WS_MAX_SOCKETS_PER_PRINCIPAL)',
    });
    expect(third.results).toEqual([]);
  });
});
