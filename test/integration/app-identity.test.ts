import { generateKeyPairSync } from 'node:crypto';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { readFixtures, userNamed } from '../helpers/fixtures';
import { startTestIdp, type TestIdp } from '../helpers/jwks-server';
import { answerBankPage } from '../helpers/sign-in-steps';
import { startStack, type Stack } from '../helpers/stack';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

const AUDIENCE = 'bankgraph-api';
const APP = 'https://app.example.com';
const VIEWER = '{ viewer { connections { id: connectionId providerId status } accounts { id: accountId connection { providerId } } } }';

describe("app identity: the app's own OIDC access tokens (AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE)", () => {
  let idp: TestIdp;
  let stack: Stack;

  beforeAll(async () => {
    idp = await startTestIdp();
    try {
      stack = await startStack({
        env: { AUTH_JWKS_URL: idp.jwksUrl, AUTH_ISSUER: idp.issuer, AUTH_AUDIENCE: AUDIENCE, AUTH_ALGORITHMS: 'ES256', CORS_ORIGINS: APP },
      });
    } catch (error) {
      await idp.close();
      throw error;
    }
  });

  afterEach(async () => {
    await disposeWsClients();
  });

  afterAll(async () => {
    try {
      await stack?.close();
    } finally {
      await idp?.close();
    }
  });

  const now = (): number => Math.floor(Date.now() / 1000);
  const claims = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
    iss: idp.issuer,
    aud: AUDIENCE,
    sub: 'app-user-1',
    iat: now(),
    exp: now() + 300,
    ...overrides,
  });

  async function connectBank(token: string, login: { username: string; password: string; bank?: string }): Promise<Response> {
    const started = await fetch(`${stack.gateway.url}/auth/connections`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(started.status).toBe(200);
    const { authorizationUrl, loginBinding } = (await started.json()) as { authorizationUrl: string; loginBinding: string };
    const callback = await answerBankPage(authorizationUrl, login);
    return fetch(callback, { headers: { accept: 'application/json', 'login-binding': loginBinding } });
  }

  it('makes the user (iss, sub) and links each bank the user connects through POST /auth/connections', async () => {
    const fixtures = await readFixtures(stack.sandbox.url);
    const token = idp.sign(claims({ sub: 'app-user-1' }));
    const empty = await stack.graphql<{ viewer: { connections: unknown[]; accounts: unknown[] } }>(VIEWER, {}, token);
    expect(empty.errors).toBeUndefined();
    expect(empty.data!.viewer).toEqual({ connections: [], accounts: [] });

    const linked = await connectBank(token, { username: 'sam', password: 'doe' });
    expect(linked.status).toBe(200);
    expect(await linked.json()).toMatchObject({ connection: { id: expect.any(String), providerId: 'mock' } });
    expect((await connectBank(token, { username: 'sam', password: 'doe', bank: 'mock-north' })).status).toBe(200);

    const viewer = await stack.graphql<{ viewer: { connections: { providerId: string }[]; accounts: { id: string }[] } }>(VIEWER, {}, token, {
      'cache-control': 'no-cache',
    });
    expect(viewer.data!.viewer.connections.map((connection) => connection.providerId)).toEqual(['mock', 'mock-north']);
    expect(viewer.data!.viewer.accounts.map((account) => account.id).sort()).toEqual(
      [...userNamed(fixtures, 'sam', 'mock').accounts, ...userNamed(fixtures, 'sam', 'mock-north').accounts].map(({ account }) => account.account_id).sort(),
    );
    // Another subject is another user, with nothing connected.
    const other = await stack.graphql<{ viewer: { connections: unknown[] } }>(VIEWER, {}, idp.sign(claims({ sub: 'app-user-2' })));
    expect(other.data!.viewer.connections).toEqual([]);
  });

  it.each([
    ['a wrong issuer', () => idp.sign(claims({ iss: 'https://other-idp.example/' }))],
    ['a wrong audience', () => idp.sign(claims({ aud: 'another-api' }))],
    ['an expired token', () => idp.sign(claims({ iat: now() - 7200, exp: now() - 3600 }))],
    ['a token not valid yet', () => idp.sign(claims({ nbf: now() + 3600 }))],
    ['alg none', () => idp.unsigned(claims())],
    ['an unknown kid', () => idp.sign(claims(), { kid: 'not-published' })],
    ['a signature by another key', () => idp.sign(claims(), { key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey })],
    ['no subject', () => idp.sign(claims({ sub: undefined }))],
    [
      'a token issued more than AUTH_MAX_TOKEN_AGE (24 h) ago, whatever its exp',
      () => idp.sign(claims({ iat: now() - 25 * 3600, exp: now() + 100 * 365 * 86_400 })),
    ],
    ['a token without iat', () => idp.sign(claims({ iat: undefined }))],
    ['a JWT that is not an access token (typ logout+jwt)', () => idp.sign(claims(), { typ: 'logout+jwt' })],
    ['garbage', () => 'not-a-jwt'],
  ])('refuses %s with UNAUTHENTICATED', async (_what, token) => {
    const result = await stack.graphql(VIEWER, {}, token());
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(result.data ?? null).toBeNull();
  });

  it.each([
    ['exp missing', () => claims({ exp: undefined }), 'The access token has no "exp" claim; it is required.'],
    ['iat missing', () => claims({ iat: undefined }), 'The access token has no "iat" claim; it is required.'],
    ['exp not a number', () => claims({ exp: 'tomorrow' }), 'The access token\'s "exp" claim is malformed (a number of seconds is expected).'],
    ['exp passed', () => claims({ iat: now() - 7200, exp: now() - 3600 }), 'The access token has expired; get a new one from your identity provider.'],
    [
      'nbf ahead',
      () => claims({ nbf: now() + 3600 }),
      'The access token is not valid yet ("nbf" is in the future); check the clocks of the identity provider and this gateway.',
    ],
    [
      'another issuer',
      () => claims({ iss: 'https://other-idp.example/' }),
      'The access token was issued by another identity provider ("iss" is not the one this gateway trusts).',
    ],
    ['another audience', () => claims({ aud: 'another-api' }), 'The access token is meant for another API ("aud" does not name this gateway\'s audience).'],
  ])('says what is wrong with a token whose %s', async (_what, tokenClaims, message) => {
    const result = await stack.graphql(VIEWER, {}, idp.sign(tokenClaims()));
    expect(result.errors?.[0]).toMatchObject({ message, extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('says that a bearer token that is no JWT is not a merchant key of this gateway either', async () => {
    const result = await stack.graphql(VIEWER, {}, 'merchant-key-of-another-instance');
    expect(result.errors?.[0]?.message).toBe(
      'The bearer token is not a merchant key of this gateway, nor an access token (a signed JWT). ' +
        'A merchant key must be one of MERCHANT_KEYS, the same list on every instance of the gateway; a user sends the access token of your identity provider.',
    );
  });

  it('says why a token too old or of another type is refused, and takes an at+jwt access token', async () => {
    const old = await stack.graphql(VIEWER, {}, idp.sign(claims({ iat: now() - 25 * 3600, exp: now() + 3600 })));
    expect(old.errors?.[0]?.message).toBe('The access token was issued too long ago (AUTH_MAX_TOKEN_AGE); get a new one from your identity provider.');
    const other = await stack.graphql(VIEWER, {}, idp.sign(claims(), { typ: 'logout+jwt' }));
    expect(other.errors?.[0]?.message).toBe('The token is not an access token (its "typ" header is not JWT or at+jwt).');
    const accessToken = await stack.graphql(VIEWER, {}, idp.sign(claims({ sub: 'app-user-at-jwt' }), { typ: 'at+jwt' }));
    expect(accessToken.errors).toBeUndefined();
  });

  it('accepts no bank-identity session and no bank sign-in at /auth/login', async () => {
    const login = await fetch(`${stack.gateway.url}/auth/login`, { redirect: 'manual' });
    expect(login.status).toBe(400);
    expect(((await login.json()) as { error: { message: string } }).error.message).toContain('POST /auth/connections');
    const cookie = await stack.graphql(VIEWER, {}, undefined, { cookie: 'bankgraph_session=anything' });
    expect(cookie.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const unauthenticated = await fetch(`${stack.gateway.url}/auth/connections`, { method: 'POST' });
    expect(unauthenticated.status).toBe(401);
  });

  it('answers POST /auth/connections with the binding in a Login-Binding header too, and that header finishes the connection', async () => {
    const token = idp.sign(claims({ sub: 'app-user-binding-header' }));
    const started = await fetch(`${stack.gateway.url}/auth/connections`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(started.status).toBe(200);
    const { authorizationUrl, loginBinding } = (await started.json()) as { authorizationUrl: string; loginBinding: string };
    const header = started.headers.get('login-binding');
    expect(header).toBe(loginBinding);
    const callback = await answerBankPage(authorizationUrl, { username: 'john', password: 'doe' });
    const done = await fetch(callback, { headers: { accept: 'application/json', 'login-binding': header! } });
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ connection: { providerId: 'mock' } });
  });

  it('hands the bank’s answer on to an app URL in CORS_ORIGINS, where the app finishes the connection with its binding', async () => {
    const token = idp.sign(claims({ sub: 'app-user-returning' }));
    const started = await fetch(`${stack.gateway.url}/auth/connections`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', origin: APP },
      body: JSON.stringify({ returnTo: `${APP}/banks` }),
    });
    expect(started.status).toBe(200);
    expect(started.headers.get('access-control-allow-origin')).toBe(APP);
    const { authorizationUrl, loginBinding } = (await started.json()) as { authorizationUrl: string; loginBinding: string };
    const callback = await answerBankPage(authorizationUrl, { username: 'john', password: 'doe' });
    const handedOn = await fetch(callback, { headers: { accept: 'text/html' }, redirect: 'manual' });
    expect(handedOn.status).toBe(302);
    const atApp = new URL(handedOn.headers.get('location')!);
    expect(`${atApp.origin}${atApp.pathname}`).toBe(`${APP}/banks`);
    const done = await fetch(`${stack.gateway.url}/auth/callback${atApp.search}`, {
      headers: { accept: 'application/json', 'login-binding': loginBinding, origin: APP },
    });
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ connection: { providerId: 'mock' } });

    const elsewhere = await fetch(`${stack.gateway.url}/auth/connections`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ returnTo: 'https://evil.example/banks' }),
    });
    expect(elsewhere.status).toBe(400);
    expect(((await elsewhere.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: expect.stringContaining('CORS_ORIGINS'),
    });
  });

  it('tells a request without credentials to send the access token, not to sign in at /auth/login (there is none)', async () => {
    const anonymous = await stack.graphql(VIEWER);
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const message = anonymous.errors?.[0]?.message ?? '';
    expect(message).toContain('"Authorization: Bearer <access token>"');
    expect(message).toContain('the "Access token" field');
    expect(message).not.toMatch(/\/auth\/login|Sign in/);
  });

  it('takes the access token over WebSocket too', async () => {
    const live = connectWs(stack.gateway.url, idp.sign(claims({ sub: 'app-user-ws' }))).subscribe('{ viewer { connections { id: connectionId } } }');
    expect(await live.next()).toEqual({ data: { viewer: { connections: [] } } });
    const refused = connectWs(stack.gateway.url, idp.unsigned(claims())).subscribe('{ viewer { connections { id: connectionId } } }');
    expect((await refused.next()).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('closes a WebSocket when the access token it was opened with expires', async () => {
    // The socket authenticates once; it must not outlive its token. exp is whole seconds.
    const expiresAtMs = (now() + 2) * 1000;
    const token = idp.sign(claims({ sub: 'app-user-expiring', exp: expiresAtMs / 1000 }));
    const client = createClient({
      url: `${stack.gateway.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
      retryAttempts: 0,
      lazy: false,
      // The close is what the test waits for, not an error to print.
      onNonLazyError: () => undefined,
    });
    try {
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        client.on('closed', (event) => resolve(event as { code: number; reason: string })),
      );
      const answer = await new Promise<unknown>((resolve, reject) => {
        let data: unknown;
        client.subscribe(
          { query: '{ viewer { connections { id: connectionId } } }' },
          { next: (result) => (data = result), error: reject, complete: () => resolve(data) },
        );
      });
      expect(answer).toEqual({ data: { viewer: { connections: [] } } });
      const { code, reason } = await closed;
      expect(Date.now()).toBeGreaterThanOrEqual(expiresAtMs);
      expect({ code, reason }).toEqual({ code: 4401, reason: 'Unauthorized: the access token has expired' });
    } finally {
      await client.dispose();
    }
  });
});
