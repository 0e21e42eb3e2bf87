import { readFileSync } from 'node:fs';
import type { IdentityEvent } from '../../src/identity/identity-events';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import { readFixtures, userNamed } from '../helpers/fixtures';
import { injectFault } from '../helpers/money';
import { answerBankPage, startSignIn } from '../helpers/sign-in-steps';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  startedMs: number;
  endedMs?: number;
}

const CARDS = '{ viewer { cards { id: cardId connection { id: connectionId providerId status } } } }';
const ACCOUNTS = '{ viewer { accounts { id: accountId } } }';
const CONNECTIONS = '{ viewer { connections { id: connectionId providerId status } } }';

describe('who the user is: durable users, bank connections, a sign-in that cannot be turned', () => {
  let stack: Stack;
  let fixtures: Fixtures;

  beforeAll(async () => {
    // Latency makes the round trips measurable: calls of one round overlap, the next round starts after the first ends.
    stack = await startStack({ sandbox: { latencyMs: 50 } });
    fixtures = await readFixtures(stack.sandbox.url);
  });

  afterEach(async () => {
    await disposeWsClients();
  });

  afterAll(async () => {
    await stack?.close();
  });

  const userIdOf = async (session: string): Promise<string> => (await stack.gateway.features.identity.sessions.get(session))!.userId;
  const providerRequests = async (): Promise<LoggedRequest[]> => (await stack.sandboxJson<{ requests: LoggedRequest[] }>('GET', '/sandbox/requests')).requests;
  const clearProviderRequests = (): Promise<unknown> => stack.sandboxJson('DELETE', '/sandbox/requests');

  describe('users', () => {
    it('keeps two card-only customers apart: each has a user of their own and sees only their own cards', async () => {
      const cara = await stack.signIn('cara', 'doe');
      const cora = await stack.signIn('cora', 'doe');
      expect(await userIdOf(cara)).not.toBe(await userIdOf(cora));

      const caraCards = await stack.graphql<{ viewer: { cards: { id: string }[] } }>(CARDS, {}, cara);
      const coraCards = await stack.graphql<{ viewer: { cards: { id: string }[] } }>(CARDS, {}, cora);
      expect(caraCards.data!.viewer.cards.map((card) => card.id)).toEqual(userNamed(fixtures, 'cara').cards.map(({ card }) => card.account_id));
      expect(coraCards.data!.viewer.cards.map((card) => card.id)).toEqual(userNamed(fixtures, 'cora').cards.map(({ card }) => card.account_id));
      // Signing in again is the same person, recognised by the card.
      expect(await userIdOf(await stack.signIn('cara', 'doe'))).toBe(await userIdOf(cara));
    });

    it('refuses a sign-in that shows neither accounts nor cards, as JSON to an app and as a page to a browser', async () => {
      await expect(stack.signIn('nora', 'doe')).rejects.toThrow(/403.*neither accounts nor cards/);

      const started = await startSignIn(stack.gateway.url, '?returnTo=/graphql');
      const callback = await answerBankPage(started.bankPage!, { username: 'nora', password: 'doe' });
      const page = await fetch(callback, { headers: { cookie: started.loginCookie!, accept: 'text/html' }, redirect: 'manual' });
      expect(page.status).toBe(403);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await page.text();
      expect(html).toContain('neither accounts nor cards');
      expect(html).toContain('href="/graphql"');
      expect(page.headers.getSetCookie().some((cookie) => cookie.startsWith('bankgraph_session=') && !cookie.includes('Max-Age=0'))).toBe(false);
    });

    it('keeps the user when the bank shows a new account at the next sign-in', async () => {
      const before = await stack.signIn('jane', 'doe');
      const added = await stack.sandboxJson<{ account_id: string }>('POST', '/sandbox/users/jane/accounts', { displayName: 'Jane New Account' });
      const after = await stack.signIn('jane', 'doe');
      expect(await userIdOf(after)).toBe(await userIdOf(before));
      const accounts = await stack.graphql<{ viewer: { accounts: { id: string }[] } }>(ACCOUNTS, {}, after, { 'cache-control': 'no-cache' });
      expect(accounts.data!.viewer.accounts.map((account) => account.id)).toContain(added.account_id);
      // The newer grant replaced the older one at the same bank: one active connection, not two showing the same accounts.
      const connections = await stack.graphql<{ viewer: { connections: { status: string }[] } }>(CONNECTIONS, {}, after);
      expect(connections.data!.viewer.connections.map((connection) => connection.status)).toEqual(['ACTIVE']);
    });

    it('stores provider tokens only encrypted: neither the refresh nor the access token is in the database file', async () => {
      const session = await stack.signIn('lee', 'doe');
      const [connection] = await stack.gateway.features.identity.connections.connectionsOf(await userIdOf(session));
      const tokens = await stack.gateway.features.identity.connections.tokens(connection!.id);
      const row = await stack.gateway.database.db.selectFrom('bankConnections').selectAll().where('id', '=', connection!.id).executeTakeFirstOrThrow();
      expect(row.refreshTokenEnc).toMatch(/^v1\./);
      expect(row.refreshTokenEnc).not.toContain(tokens!.refreshToken);
      const file = stack.config.store.url.replace('sqlite://', '');
      for (const path of [file, `${file}-wal`]) {
        let bytes: string;
        try {
          bytes = readFileSync(path).toString('latin1');
        } catch {
          continue;
        }
        expect(bytes).not.toContain(tokens!.refreshToken);
        expect(bytes).not.toContain(tokens!.accessToken);
      }
    });
  });

  describe('two banks', () => {
    it('adds a second bank to the signed-in user and merges both into the viewer: 2 + 2A + 2C calls per bank, in 2 round trips', async () => {
      const first = await stack.signIn('sam', 'doe');
      const second = await stack.signIn('sam', 'doe', { bank: 'mock-north', sessionToken: first });
      expect(await userIdOf(second)).toBe(await userIdOf(first));
      const atMock = userNamed(fixtures, 'sam', 'mock');
      const atNorth = userNamed(fixtures, 'sam', 'mock-north');

      await clearProviderRequests();
      // Each data call 200 ms rather than 50, so a busy machine's delay in starting the second round's calls (each
      // starts when its own list has answered) is not taken for a third round.
      await injectFault(stack, { match: 'GET /data/**', latencyMs: 150 });
      const result = await stack.graphql<{
        viewer: {
          connections: { id: string; providerId: string }[];
          accounts: { id: string; provider: { id: string }; connection: { id: string; providerId: string; status: string } }[];
          cards: { id: string }[];
        };
      }>(
        `{ viewer { connections { id: connectionId providerId }
            accounts { id: accountId provider { id } connection { id: connectionId providerId status } balance { current } transactions(first: 5) { totalCount } }
            cards { id: cardId balance { current } transactions(first: 5) { totalCount } } } }`,
        {},
        second,
        { 'cache-control': 'no-cache' },
      );
      expect(result.errors).toBeUndefined();
      const { viewer } = result.data!;
      expect(viewer.connections.map((connection) => connection.providerId)).toEqual(['mock', 'mock-north']);
      expect(viewer.accounts.map((account) => account.id).sort()).toEqual(
        [...atMock.accounts, ...atNorth.accounts].map(({ account }) => account.account_id).sort(),
      );
      expect(viewer.cards.map((card) => card.id).sort()).toEqual([...atMock.cards, ...atNorth.cards].map(({ card }) => card.account_id).sort());
      for (const account of viewer.accounts) {
        expect(account.connection).toMatchObject({ providerId: account.provider.id, status: 'ACTIVE' });
      }

      const calls = (await providerRequests()).filter((request) => request.path.startsWith('/data/'));
      const expected = (user: typeof atMock): number => 2 + 2 * user.accounts.length + 2 * user.cards.length;
      expect(calls).toHaveLength(expected(atMock) + expected(atNorth));
      // Round 1: both banks' lists at once; round 2: everything else, started after the lists and all at once.
      const lists = calls.filter((call) => call.path === '/data/v1/accounts' || call.path === '/data/v1/cards');
      const rest = calls.filter((call) => !lists.includes(call));
      expect(lists).toHaveLength(4);
      const firstListEnd = Math.min(...lists.map((call) => call.endedMs!));
      expect(Math.max(...lists.map((call) => call.startedMs))).toBeLessThan(firstListEnd);
      expect(Math.min(...rest.map((call) => call.startedMs))).toBeGreaterThanOrEqual(firstListEnd);
      expect(Math.max(...rest.map((call) => call.startedMs))).toBeLessThan(Math.min(...rest.map((call) => call.endedMs!)));
      await stack.sandboxJson('DELETE', '/sandbox/faults');
    });

    it('answers the other bank when one connection fails, with an error at the failing path only', async () => {
      const first = await stack.signIn('sam', 'doe');
      const session = await stack.signIn('sam', 'doe', { bank: 'mock-north', sessionToken: first });
      const connections = await stack.gateway.features.identity.connections.connectionsOf(await userIdOf(session));
      const north = connections.find((connection) => connection.providerId === 'mock-north')!;
      // The bank ended this consent: the access token is stale and the refresh token no longer works.
      await stack.gateway.features.identity.connections.updateTokens(north.id, {
        accessToken: 'expired-access-token',
        refreshToken: 'revoked-refresh-token',
        expiresAtMs: 0,
      });
      stack.gateway.features.identity.userTokens.forget(north.id);

      const result = await stack.graphql<{ viewer: { accounts: { id: string; provider: { id: string } }[] } }>(
        '{ viewer { accounts { id: accountId provider { id } } } }',
        {},
        session,
        { 'cache-control': 'no-cache' },
      );
      expect(result.data!.viewer.accounts.map((account) => account.provider.id)).toEqual(userNamed(fixtures, 'sam', 'mock').accounts.map(() => 'mock'));
      expect(result.errors).toHaveLength(1);
      expect(result.errors![0]).toMatchObject({ path: ['viewer', 'accounts'], extensions: { code: 'UNAUTHENTICATED', connectionId: north.id } });
      const after = await stack.graphql<{ viewer: { connections: { id: string; status: string }[] } }>(CONNECTIONS, {}, session);
      expect(after.data!.viewer.connections.find((connection) => connection.id === north.id)?.status).toBe('EXPIRED');
    });

    it("disconnectBank revokes one connection: its accounts leave the viewer and the user's subscriptions end", async () => {
      const first = await stack.signIn('sam', 'doe');
      const session = await stack.signIn('sam', 'doe', { bank: 'mock-north', sessionToken: first });
      const task = await stack.graphql<{ startDataTask: { id: string } }>('mutation { startDataTask(input: { resource: CARDS }) { id } }', {}, session);
      const live = connectWs(stack.gateway.url, session).subscribe('subscription ($id: ID!) { dataTaskUpdated(id: $id) { id status } }', {
        id: task.data!.startDataTask.id,
      });
      expect((await live.next()).errors).toBeUndefined();
      const both = await stack.graphql<{ viewer: { accounts: { provider: { id: string } }[] } }>('{ viewer { accounts { provider { id } } } }', {}, session);
      expect(new Set(both.data!.viewer.accounts.map((account) => account.provider.id))).toEqual(new Set(['mock', 'mock-north']));
      const listed = await stack.graphql<{ viewer: { connections: { id: string; providerId: string }[] } }>(CONNECTIONS, {}, session);
      const north = listed.data!.viewer.connections.find((connection) => connection.providerId === 'mock-north')!;
      const revoked = await stack.graphql<{ disconnectBank: { id: string; status: string } }>(
        'mutation ($id: ID!) { disconnectBank(connectionId: $id) { id: connectionId status } }',
        { id: north.id },
        session,
      );
      expect(revoked.data!.disconnectBank).toEqual({ id: north.id, status: 'REVOKED' });
      expect(((await live.ended).error as { code?: number }).code).toBe(4401);
      // Without no-cache: an answer kept from before the disconnect must not be served again.
      const accounts = await stack.graphql<{ viewer: { accounts: { provider: { id: string } }[] } }>(
        '{ viewer { accounts { provider { id } } } }',
        {},
        session,
      );
      expect(new Set(accounts.data!.viewer.accounts.map((account) => account.provider.id))).toEqual(new Set(['mock']));
      const again = await stack.graphql(
        'mutation ($id: ID!) { disconnectBank(connectionId: $id) { id: connectionId } }',
        { id: north.id },
        await stack.signIn('jane', 'doe'),
      );
      expect(again.errors![0]!.extensions!.code).toBe('NOT_FOUND');
    });
  });

  describe('login CSRF', () => {
    it('refuses a callback opened without the binding of the browser or app that started it, before the code is exchanged', async () => {
      // The attacker starts a sign-in and stops at the bank's redirect back.
      const attacker = await startSignIn(stack.gateway.url, '?response=json');
      const callback = await answerBankPage(attacker.bankPage!, { username: 'john', password: 'doe' });
      await clearProviderRequests();

      // The victim's browser opens it: no binding cookie, or someone else's.
      const other = await startSignIn(stack.gateway.url, '');
      const attempts: Record<string, string>[] = [
        { accept: 'application/json' },
        { accept: 'application/json', cookie: other.loginCookie! },
        { accept: 'application/json', 'login-binding': other.binding! },
      ];
      for (const headers of attempts) {
        const refused = await fetch(callback, { headers, redirect: 'manual' });
        expect(refused.status).toBe(401);
        expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('UNAUTHENTICATED');
      }
      expect((await providerRequests()).filter((request) => request.path.includes('token'))).toEqual([]);
    });

    it('signs in the browser that holds the login cookie, and sends it to its returnTo', async () => {
      const started = await startSignIn(stack.gateway.url, '?returnTo=/graphql%3Ftab%3D1');
      expect(started.loginCookie).toBeDefined();
      const callback = await answerBankPage(started.bankPage!, { username: 'john', password: 'doe' });
      const done = await fetch(callback, { headers: { cookie: started.loginCookie!, accept: 'text/html' }, redirect: 'manual' });
      expect(done.status).toBe(302);
      expect(done.headers.get('location')).toBe('/graphql?tab=1');
      expect(done.headers.getSetCookie().some((cookie) => /^bankgraph_session=[^;]+;.*HttpOnly/.test(cookie))).toBe(true);
    });

    it('shows a page with a way back when the user cancels at the bank, and JSON to an app', async () => {
      const browser = await startSignIn(stack.gateway.url, '?returnTo=/graphql');
      const cancelled = await answerBankPage(browser.bankPage!, { username: '', password: '' }, 'deny');
      const page = await fetch(cancelled, { headers: { cookie: browser.loginCookie!, accept: 'text/html' } });
      expect(page.status).toBe(401);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toMatch(/cancelled the sign-in at your bank[\s\S]*href="\/graphql"/);

      const app = await startSignIn(stack.gateway.url, '?response=json');
      const appCancelled = await answerBankPage(app.bankPage!, { username: '', password: '' }, 'deny');
      const json = await fetch(appCancelled, { headers: { 'login-binding': app.binding!, accept: 'application/json' } });
      expect(json.status).toBe(401);
      expect(((await json.json()) as { error: { message: string } }).error.message).toMatch(/cancelled/);
    });
  });

  describe('returnTo', () => {
    const tricks = [
      '/%09/evil.example',
      '/%0A/x',
      '//evil.example',
      '/\\evil.example',
      '/%5Cevil.example',
      'https://evil.example/',
      'evil.example',
      '/%0D%0ASet-Cookie:x=1',
      '/%20/evil.example',
      '/%E2%80%8B/evil.example',
      '/%00',
      '/caf%C3%A9',
      '/%E4%BD%A0%E5%A5%BD',
      `/${'a'.repeat(512)}`,
      '',
    ];

    it.each(tricks)('refuses returnTo=%s with 400, before the bank is contacted', async (trick) => {
      await clearProviderRequests();
      const answer = await startSignIn(stack.gateway.url, `?returnTo=${trick}`);
      expect(answer.status).toBe(400);
      expect(answer.bankPage).toBeUndefined();
      expect(answer.loginCookie).toBeUndefined();
      expect(JSON.parse(answer.body!)).toMatchObject({ error: { code: 'BAD_USER_INPUT', message: expect.stringContaining('returnTo') } });
      // Nothing of the sign-in reached the provider (webhook key fetches of earlier tests may still arrive).
      expect(
        (await providerRequests()).filter((request) => request.path === '/' || request.path === '/connect/token' || request.path.startsWith('/data/')),
      ).toEqual([]);
    });

    it('accepts a same-origin path of up to 512 characters', async () => {
      expect((await startSignIn(stack.gateway.url, `?returnTo=/${'a'.repeat(511)}`)).status).toBe(302);
      expect((await startSignIn(stack.gateway.url, '?returnTo=/graphql?x=/y')).status).toBe(302);
    });
  });

  describe('logout', () => {
    it("closes the open subscriptions of that session within a second; the user's other sessions keep theirs", async () => {
      const session = await stack.signIn('john', 'doe');
      const other = await stack.signIn('john', 'doe');
      const start = 'mutation { startDataTask(input: { resource: ACCOUNTS }) { id: taskId } }';
      const updated = 'subscription ($id: ID!) { dataTaskUpdated(id: $id) { id status } }';
      const task = await stack.graphql<{ startDataTask: { id: string } }>(start, {}, session);
      const live = connectWs(stack.gateway.url, session).subscribe(updated, { id: task.data!.startDataTask.id });
      expect((await live.next()).errors).toBeUndefined();
      const otherTask = await stack.graphql<{ startDataTask: { id: string } }>(start, {}, other);
      const otherLive = connectWs(stack.gateway.url, other).subscribe(updated, { id: otherTask.data!.startDataTask.id });
      expect((await otherLive.next()).errors).toBeUndefined();

      const loggedOut = await fetch(`${stack.gateway.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${session}` } });
      expect(loggedOut.status).toBe(204);
      const started = performance.now();
      const ended = await live.ended;
      expect(performance.now() - started).toBeLessThan(1_000);
      expect((ended.error as { code?: number }).code).toBe(4401);
      expect(otherLive.isEnded()).toBe(false);
      expect((await stack.graphql(ACCOUNTS, {}, session)).errors![0]!.extensions!.code).toBe('UNAUTHENTICATED');
    });

    it('revoking a user (merchant key) ends all their sessions and subscriptions', async () => {
      const session = await stack.signIn('lee', 'doe');
      const userId = (await stack.graphql<{ viewer: { id: string } }>('{ viewer { id: userId } }', {}, session)).data!.viewer.id;
      expect(userId).toBe(await userIdOf(session));
      const task = await stack.graphql<{ startDataTask: { id: string } }>(
        'mutation { startDataTask(input: { resource: ACCOUNTS }) { id: taskId } }',
        {},
        session,
      );
      const live = connectWs(stack.gateway.url, session).subscribe('subscription ($id: ID!) { dataTaskUpdated(id: $id) { id status } }', {
        id: task.data!.startDataTask.id,
      });
      expect((await live.next()).errors).toBeUndefined();

      const asUser = await stack.graphql('mutation ($id: ID!) { revokeUser(userId: $id) }', { id: userId }, session);
      expect(asUser.errors![0]!.extensions!.code).toBe('FORBIDDEN');
      const revoked = await stack.graphql<{ revokeUser: boolean }>('mutation ($id: ID!) { revokeUser(userId: $id) }', { id: userId }, stack.merchantKey);
      expect(revoked.data).toEqual({ revokeUser: true });
      expect(((await live.ended).error as { code?: number }).code).toBe(4401);
      expect((await stack.graphql(ACCOUNTS, {}, session)).errors![0]!.extensions!.code).toBe('UNAUTHENTICATED');
      expect(
        (await stack.graphql('mutation ($id: ID!) { revokeUser(userId: $id) }', { id: 'user_unknown' }, stack.merchantKey)).errors![0]!.extensions!.code,
      ).toBe('NOT_FOUND');
    });

    it('announces the logout on the event bus, for every instance (test/integration/multi-instance.test.ts runs two)', async () => {
      const heard: IdentityEvent[] = [];
      const stop = await stack.gateway.features.identity.identityEvents.listen((event) => heard.push(event));
      try {
        const session = await stack.signIn('john', 'doe');
        const userId = await userIdOf(session);
        await fetch(`${stack.gateway.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${session}` } });
        const logout = await waitFor(() => heard.find((event) => event.kind === 'logout'), 'the logout on the bus');
        expect(logout).toEqual({ kind: 'logout', userId, sessionKey: expect.any(String) });
        expect(JSON.stringify(logout)).not.toContain(session);
      } finally {
        await stop();
      }
    });
  });
});
