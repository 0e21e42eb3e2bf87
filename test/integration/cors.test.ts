import { Writable } from 'node:stream';
import { createLogger } from '../../src/platform/observability/logger';
import { answerBankPage, startSignIn } from '../helpers/sign-in-steps';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';
import { queryOverBrowserSocket, type BrowserSocketOutcome } from '../helpers/ws-client';

/*
 * A browser app on its own origin (a Vite dev server on :5173) calling the gateway: CORS on HTTP for the origins in
 * CORS_ORIGINS, the same list admitting the app's cookie WebSockets and streams, and nothing for any other origin.
 */

const APP = 'http://localhost:5173';
const OTHER_APP = 'https://app.example.com';
const FOREIGN = 'http://evil.example';
const VIEWER = '{ viewer { accounts { id } } }';
const STREAM = 'subscription { payoutUpdated(transactionId: "cors-test") { status } }';

describe('CORS for the origins in CORS_ORIGINS', () => {
  let stack: Stack;
  let session: string;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    stack = await startStack({ env: { CORS_ORIGINS: `${APP}, ${OTHER_APP}/` }, gateway: { logger: createLogger('info', sink) } });
    session = await stack.signIn('john', 'doe');
  });

  afterAll(async () => {
    await stack?.close();
  });

  const corsHeadersOf = (response: Response): Record<string, string> =>
    Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-')));
  const varyOf = (response: Response): string[] => (response.headers.get('vary') ?? '').split(',').map((part) => part.trim().toLowerCase());
  const preflight = (path: string, origin: string, requestHeaders = 'content-type, authorization'): Promise<Response> =>
    fetch(`${stack.gateway.url}${path}`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': requestHeaders },
    });
  const post = (origin: string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${stack.gateway.url}/graphql`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json', 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'same-site', ...headers },
      body: JSON.stringify({ query: VIEWER }),
    });

  it.each(['/graphql', '/graphql/stream', '/auth/login', '/auth/logout', '/auth/callback'])(
    'answers a preflight to %s from a listed origin (204) before Apollo’s CSRF check, naming what an app sends and reads',
    async (path) => {
      const clientHeaders = 'content-type, authorization, apollo-require-preflight, x-apollo-operation-name, graphql-client-name, traceparent';
      for (const origin of [APP, OTHER_APP]) {
        const answer = await preflight(path, origin, clientHeaders);
        expect(answer.status).toBe(204);
        expect(answer.headers.get('access-control-allow-origin')).toBe(origin);
        expect(answer.headers.get('access-control-allow-credentials')).toBe('true');
        expect(answer.headers.get('access-control-allow-methods')).toMatch(/\bPOST\b/);
        const allowed = (answer.headers.get('access-control-allow-headers') ?? '').split(',').map((name) => name.trim());
        expect(allowed).toEqual(expect.arrayContaining(clientHeaders.split(', ')));
        expect(Number(answer.headers.get('access-control-max-age'))).toBeGreaterThan(0);
        expect(varyOf(answer)).toContain('origin');
        expect(await answer.text()).toBe('');
      }
    },
  );

  it('gives a preflight from an unlisted origin no CORS headers, and says why in its body', async () => {
    for (const path of ['/graphql', '/graphql/stream', '/auth/login']) {
      const answer = await preflight(path, FOREIGN);
      expect([path, answer.status, corsHeadersOf(answer)]).toEqual([path, 403, {}]);
      expect(varyOf(answer)).toContain('origin');
      const { error } = (await answer.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('FORBIDDEN');
      expect(error.message).toContain('CORS_ORIGINS');
    }
  });

  it('lets a listed origin read the answer of a POST with the session cookie: its origin, credentials, Vary and the exposed headers', async () => {
    const answer = await post(APP, { cookie: `bankgraph_session=${session}` });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBe(APP);
    expect(answer.headers.get('access-control-allow-credentials')).toBe('true');
    expect(varyOf(answer)).toContain('origin');
    const exposed = (answer.headers.get('access-control-expose-headers') ?? '').split(',').map((name) => name.trim());
    expect(exposed).toEqual(expect.arrayContaining(['x-request-id', 'retry-after']));
    const body = (await answer.json()) as { data: { viewer: { accounts: unknown[] } } };
    expect(body.data.viewer.accounts.length).toBeGreaterThan(0);
  });

  it('never answers `*`, and answers no CORS headers at all without an Origin or to the gateway’s own origin', async () => {
    const own = new URL(stack.gateway.url).origin;
    for (const headers of [{}, { origin: own }] as Record<string, string>[]) {
      const answer = await fetch(`${stack.gateway.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${session}`, ...headers },
        body: JSON.stringify({ query: VIEWER }),
      });
      expect(answer.status).toBe(200);
      expect(corsHeadersOf(answer)).toEqual({});
      expect(varyOf(answer)).toContain('origin');
    }
  });

  it('adds Origin to the Vary a route writes itself (the playground page varies by Accept)', async () => {
    const page = await fetch(`${stack.gateway.url}/graphql`, { headers: { origin: APP, accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(varyOf(page)).toEqual(expect.arrayContaining(['origin', 'accept']));
  });

  it('answers an unlisted origin’s POST without CORS headers, and logs why once per origin', async () => {
    const before = lines.filter((line) => line.origin === FOREIGN).length;
    expect(before).toBeLessThanOrEqual(1);
    for (let round = 0; round < 3; round += 1) {
      const answer = await post(FOREIGN, { authorization: `Bearer ${session}` });
      expect(corsHeadersOf(answer)).toEqual({});
      expect(varyOf(answer)).toContain('origin');
    }
    const another = 'http://other.example:8080';
    await post(another);
    await post(another);
    await waitFor(() => (lines.some((line) => line.origin === another) ? true : undefined), 'the log line of the other origin');
    const logged = lines.filter((line) => line.origin === FOREIGN);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 'warn', msg: expect.stringContaining('CORS_ORIGINS') });
    expect(lines.filter((line) => line.origin === another)).toHaveLength(1);
    expect(JSON.stringify(lines)).not.toContain(session);
  });

  it('admits a listed origin’s cookie WebSocket and refuses an unlisted one (4403)', async () => {
    const listed = await queryOverWebSocket({ origin: APP, cookie: `bankgraph_session=${session}` });
    expect(listed.errors).toBeUndefined();
    expect((listed.data as { viewer: { accounts: unknown[] } }).viewer.accounts.length).toBeGreaterThan(0);

    const foreign = await queryOverWebSocket({ origin: FOREIGN, cookie: `bankgraph_session=${session}` });
    expect(foreign.data).toBeUndefined();
    expect(foreign.closeCode).toBe(4403);
    expect(foreign.closeReason).toMatch(/CORS_ORIGINS/);
  });

  it('serves a listed same-site origin’s cookie SSE stream with its CORS headers, and refuses an unlisted one (403)', async () => {
    const cookie = `bankgraph_session=${session}`;
    const open = (origin: string, site: string): Promise<Response> =>
      fetch(`${stack.gateway.url}/graphql/stream`, {
        method: 'POST',
        headers: { origin, cookie, accept: 'text/event-stream', 'content-type': 'application/json', 'sec-fetch-mode': 'cors', 'sec-fetch-site': site },
        body: JSON.stringify({ query: STREAM }),
        signal: AbortSignal.timeout(10_000),
      });
    const listed = await open(APP, 'same-site');
    expect(listed.status).toBe(200);
    expect(listed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(listed.headers.get('access-control-allow-origin')).toBe(APP);
    expect(listed.headers.get('access-control-allow-credentials')).toBe('true');
    await listed.body?.cancel();

    // A browser marks a page on another site cross-site; one of the same site on an unlisted port, same-site.
    for (const site of ['cross-site', 'same-site']) {
      const foreign = await open(site === 'cross-site' ? FOREIGN : 'http://localhost:5174', site);
      expect([site, foreign.status, corsHeadersOf(foreign)]).toEqual([site, 403, {}]);
      expect(((await foreign.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('FORBIDDEN');
    }
  });

  it('streams a listed origin’s cookie @defer query as multipart with its CORS headers, and refuses an unlisted one (403)', async () => {
    const cookie = `bankgraph_session=${session}`;
    const ask = (origin: string, site: string): Promise<Response> =>
      fetch(`${stack.gateway.url}/graphql`, {
        method: 'POST',
        headers: {
          origin,
          cookie,
          accept: 'multipart/mixed;deferSpec=20220824, application/json',
          'content-type': 'application/json',
          'sec-fetch-mode': 'cors',
          'sec-fetch-site': site,
        },
        body: JSON.stringify({ query: 'query { viewer { accounts { id ... @defer { balance { current } } } } }' }),
        signal: AbortSignal.timeout(10_000),
      });
    const listed = await ask(APP, 'same-site');
    expect(listed.status).toBe(200);
    expect(listed.headers.get('content-type')).toBe('multipart/mixed;boundary="graphql";deferSpec=20220824');
    expect(listed.headers.get('access-control-allow-origin')).toBe(APP);
    expect(listed.headers.get('access-control-allow-credentials')).toBe('true');
    const body = await listed.text();
    expect(body).toContain('"hasNext":true');
    expect(body).toContain('"incremental"');
    expect(body.trimEnd().endsWith('--graphql--')).toBe(true);

    const foreign = await ask('http://localhost:5174', 'same-site');
    expect([foreign.status, corsHeadersOf(foreign)]).toEqual([403, {}]);
    expect(((await foreign.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('FORBIDDEN');
  });

  describe('the sign-in returning to the app', () => {
    it('sends the browser back to an absolute returnTo on a listed origin, with a session cookie the app’s same-site fetches carry', async () => {
      const returnTo = `${APP}/signed-in?tab=accounts`;
      const started = await startSignIn(stack.gateway.url, `?returnTo=${encodeURIComponent(returnTo)}`);
      expect(started.status).toBe(302);
      const callback = await answerBankPage(started.bankPage!, { username: 'john', password: 'doe' });
      const done = await fetch(callback, { headers: { cookie: started.loginCookie!, accept: 'text/html' }, redirect: 'manual' });
      expect(done.status).toBe(302);
      expect(done.headers.get('location')).toBe(returnTo);
      const cookie = done.headers.getSetCookie().find((value) => value.startsWith('bankgraph_session='))!;
      // Host-only, on every path, Lax: sent by a same-site fetch with credentials: 'include' from any port of localhost.
      expect(cookie).toMatch(/; Path=\/;/);
      expect(cookie).toMatch(/SameSite=Lax/);
      expect(cookie).not.toMatch(/Domain=/i);
      const answer = await post(APP, { cookie: cookie.split(';')[0]! });
      expect(answer.headers.get('access-control-allow-origin')).toBe(APP);
      expect(((await answer.json()) as { data: { viewer: { accounts: unknown[] } } }).data.viewer.accounts.length).toBeGreaterThan(0);
    });

    it('signs in an app on another site by the JSON sign-in: the bank’s answer handed on to the app, which finishes with its binding and gets a bearer token', async () => {
      const returnTo = `${OTHER_APP}/signed-in?from=bank#/accounts`;
      const cross = { origin: OTHER_APP, 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'cross-site' };
      const started = await fetch(`${stack.gateway.url}/auth/login?response=json&returnTo=${encodeURIComponent(returnTo)}`, {
        headers: { ...cross, accept: 'application/json' },
        redirect: 'manual',
      });
      expect(started.status).toBe(200);
      expect(started.headers.get('access-control-allow-origin')).toBe(OTHER_APP);
      const { authorizationUrl, loginBinding } = (await started.json()) as { authorizationUrl: string; loginBinding: string };
      expect(loginBinding).toBe(started.headers.get('login-binding'));

      // The bank sends the browser to the gateway's callback, which sends it on to the app with the bank's answer.
      const callback = await answerBankPage(authorizationUrl, { username: 'john', password: 'doe' });
      const handedOn = await fetch(callback, { headers: { accept: 'text/html', 'sec-fetch-site': 'cross-site' }, redirect: 'manual' });
      expect(handedOn.status).toBe(302);
      expect(handedOn.headers.getSetCookie()).toEqual([]);
      const atApp = new URL(handedOn.headers.get('location')!);
      expect(`${atApp.origin}${atApp.pathname}`).toBe(`${OTHER_APP}/signed-in`);
      expect(atApp.hash).toBe('#/accounts');
      expect(atApp.searchParams.get('from')).toBe('bank');
      const { code, state } = Object.fromEntries(atApp.searchParams) as { code: string; state: string };
      expect(new URL(callback).searchParams.get('code')).toBe(code);

      const finish = (binding?: string): Promise<Response> =>
        fetch(`${stack.gateway.url}/auth/callback?${new URLSearchParams({ code, state })}`, {
          headers: { ...cross, accept: 'application/json', ...(binding ? { 'login-binding': binding } : {}) },
        });
      const finished = await finish(loginBinding);
      expect(finished.status).toBe(200);
      expect(finished.headers.get('access-control-allow-origin')).toBe(OTHER_APP);
      const { sessionToken } = (await finished.json()) as { sessionToken: string };
      const answer = await post(OTHER_APP, { authorization: `Bearer ${sessionToken}`, 'sec-fetch-site': 'cross-site' });
      expect(answer.headers.get('access-control-allow-origin')).toBe(OTHER_APP);
      expect(((await answer.json()) as { data: { viewer: { accounts: unknown[] } } }).data.viewer.accounts.length).toBeGreaterThan(0);
      // Used once: the same answer of the bank signs nobody in again.
      expect((await finish(loginBinding)).status).toBe(401);
    });

    it('finishes a handed-on sign-in only with the binding of the app that started it', async () => {
      const started = await fetch(`${stack.gateway.url}/auth/login?response=json&returnTo=${encodeURIComponent(`${OTHER_APP}/`)}`, {
        headers: { accept: 'application/json' },
      });
      const { authorizationUrl } = (await started.json()) as { authorizationUrl: string };
      const callback = await answerBankPage(authorizationUrl, { username: 'john', password: 'doe' });
      const atApp = new URL((await fetch(callback, { headers: { accept: 'text/html' }, redirect: 'manual' })).headers.get('location')!);
      const other = await fetch(`${stack.gateway.url}/auth/callback?${atApp.searchParams}`, {
        headers: { accept: 'application/json', 'login-binding': 'not-the-binding-of-this-sign-in' },
      });
      expect(other.status).toBe(401);
      expect(((await other.json()) as { error: { code: string } }).error.code).toBe('UNAUTHENTICATED');
    });

    it.each([
      `${FOREIGN}/signed-in`,
      'http://localhost:5174/',
      'http://localhost:5173.evil.example/',
      'http://user@localhost:5173/',
      'javascript:alert(1)',
      'http://localhost:5173/\r\nSet-Cookie:x=1',
      'http://localhost:5173\t.evil.example/',
      'http://localhost:5173/caf\u00e9',
    ])('refuses an absolute returnTo=%s that is not on a listed origin (400), before the bank is contacted', async (returnTo) => {
      const answer = await startSignIn(stack.gateway.url, `?returnTo=${encodeURIComponent(returnTo)}`);
      expect(answer.status).toBe(400);
      expect(answer.bankPage).toBeUndefined();
      const { error } = JSON.parse(answer.body!) as { error: { code: string; message: string } };
      expect(error.code).toBe('BAD_USER_INPUT');
      expect(error.message).toContain('returnTo');
    });
  });

  /** One query over a WebSocket whose upgrade carries these headers, as a browser on their Origin opens it. */
  const queryOverWebSocket = (headers: Record<string, string>): Promise<BrowserSocketOutcome> => queryOverBrowserSocket(stack.gateway.url, VIEWER, headers);
});
