import { parseLoginForm } from '../../src/sandbox/auth/bank-form.reader';
import {
  authorizeUrl,
  bearer,
  exchangeCode,
  getAppToken,
  getUserToken,
  pkcePair,
  refreshUserToken,
  signIn,
  TEST_REDIRECT_URI,
  tokenRequest,
  type TokenResponse,
} from '../helpers/sandbox-auth';
import { advanceClock, request, useSandbox } from '../helpers/sandbox-server';

const JOHN = { username: 'john', password: 'doe' };

async function oauthError(response: Response): Promise<{ status: number; error: string; error_description: string }> {
  const body = (await response.json()) as { error: string; error_description: string };
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
  expect(body.error_description.length).toBeGreaterThan(10);
  return { status: response.status, ...body };
}

describe('token endpoint: client credentials', () => {
  const sandbox = useSandbox();

  it('issues an application token with both scopes by default, no refresh token, not cacheable', async () => {
    const response = await tokenRequest(sandbox(), { grant_type: 'client_credentials' });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = await response.json();
    expect(body).toEqual({ access_token: expect.any(String), expires_in: 3600, token_type: 'Bearer', scope: 'paydirect payments' });
  });

  it('grants the requested subset of paydirect payments', async () => {
    expect((await getAppToken(sandbox(), 'paydirect')).scope).toBe('paydirect');
    expect((await getAppToken(sandbox(), 'payments')).scope).toBe('payments');
    expect((await getAppToken(sandbox(), 'payments paydirect')).scope).toBe('paydirect payments');
  });

  it('refuses unknown or empty scopes with 400 invalid_scope', async () => {
    for (const scope of ['accounts', 'paydirect admin', ' ']) {
      const error = await oauthError(await tokenRequest(sandbox(), { grant_type: 'client_credentials', scope }));
      expect(error).toMatchObject({ status: 400, error: 'invalid_scope' });
      expect(error.error_description).toContain('paydirect and payments');
    }
  });

  it('accepts the client credentials as HTTP Basic too', async () => {
    const response = await tokenRequest(sandbox(), { grant_type: 'client_credentials' }, { basicAuth: true });
    expect(response.status).toBe(200);
  });

  it('answers 401 invalid_client for a wrong secret, an unknown client or no credentials', async () => {
    const cases: Record<string, string>[] = [
      { client_secret: 'wrong' },
      { client_id: 'someone-else' },
      { client_id: '', client_secret: '' },
      { client_secret: '' },
    ];
    for (const fields of cases) {
      const error = await oauthError(await tokenRequest(sandbox(), { grant_type: 'client_credentials', ...fields }));
      expect(error).toMatchObject({ status: 401, error: 'invalid_client' });
    }
  });

  it('tells a Basic client how to authenticate when its secret is wrong', async () => {
    const response = await fetch(`${sandbox().url}/connect/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${sandbox().context.client.clientId}:nope`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic /);
    expect((await oauthError(response)).error).toBe('invalid_client');
  });

  it('refuses two client authentication methods at once', async () => {
    const response = await fetch(`${sandbox().url}/connect/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${sandbox().context.client.clientId}:${sandbox().context.client.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_secret: sandbox().context.client.clientSecret }).toString(),
    });
    expect(await oauthError(response)).toMatchObject({ status: 400, error: 'invalid_request' });
  });

  it('answers 400 unsupported_grant_type for an unknown grant and invalid_request without one', async () => {
    expect(await oauthError(await tokenRequest(sandbox(), { grant_type: 'password' }))).toMatchObject({ status: 400, error: 'unsupported_grant_type' });
    expect(await oauthError(await tokenRequest(sandbox(), {}))).toMatchObject({ status: 400, error: 'invalid_request' });
  });

  it('answers 400 invalid_request for a JSON body or a repeated parameter', async () => {
    const json = await fetch(`${sandbox().url}/connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials' }),
    });
    const error = await oauthError(json);
    expect(error).toMatchObject({ status: 400, error: 'invalid_request' });
    expect(error.error_description).toContain('application/x-www-form-urlencoded');
    const { clientId, clientSecret } = sandbox().context.client;
    const repeated = await fetch(`${sandbox().url}/connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&client_id=${clientId}&client_secret=${clientSecret}&scope=payments&scope=paydirect`,
    });
    expect(await oauthError(repeated)).toMatchObject({ status: 400, error: 'invalid_request', error_description: 'scope was sent more than once' });
  });
});

describe('token endpoint: authorization code', () => {
  const sandbox = useSandbox({}, 'each');

  it('signs in through the bank form and exchanges the code for a user token with info accounts and a refresh token', async () => {
    const { verifier, challenge } = pkcePair();
    const signedIn = await signIn(sandbox(), JOHN, { state: 'st-123', codeChallenge: challenge });
    expect(signedIn.status).toBe(302);
    expect(signedIn.location!.startsWith(`${TEST_REDIRECT_URI}?`)).toBe(true);
    expect(signedIn.state).toBe('st-123');
    const response = await exchangeCode(sandbox(), signedIn.code!, { codeVerifier: verifier });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as TokenResponse;
    expect(Object.keys(body)).toEqual(['access_token', 'expires_in', 'token_type', 'refresh_token', 'scope']);
    expect(body).toMatchObject({ expires_in: 3600, token_type: 'Bearer', scope: 'info accounts' });
    const accounts = await request(`${sandbox().url}/data/v1/accounts`, { headers: bearer(body.access_token) });
    expect(accounts.status).toBe(200);
    expect(accounts.body.results).toHaveLength(3);
  });

  it('works without PKCE when no code_challenge was sent', async () => {
    const signedIn = await signIn(sandbox(), { username: 'jane', password: 'doe' });
    const response = await exchangeCode(sandbox(), signedIn.code!);
    expect(response.status).toBe(200);
  });

  it('refuses a reused code with invalid_grant and revokes the tokens the code gave', async () => {
    const signedIn = await signIn(sandbox(), JOHN);
    const first = (await (await exchangeCode(sandbox(), signedIn.code!)).json()) as TokenResponse & { refresh_token: string };
    const again = await oauthError(await exchangeCode(sandbox(), signedIn.code!));
    expect(again).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(again.error_description).toContain('already been used');
    const accounts = await request(`${sandbox().url}/data/v1/accounts`, { headers: bearer(first.access_token) });
    expect(accounts.status).toBe(401);
    const refreshed = await tokenRequest(sandbox(), { grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect((await oauthError(refreshed)).error).toBe('invalid_grant');
  });

  it('refuses a code older than 60 seconds of sandbox time', async () => {
    const signedIn = await signIn(sandbox(), JOHN);
    await advanceClock(sandbox(), 61);
    const error = await oauthError(await exchangeCode(sandbox(), signedIn.code!));
    expect(error).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(error.error_description).toContain('expired');
  });

  it('accepts a code 59 seconds old', async () => {
    const signedIn = await signIn(sandbox(), JOHN);
    await advanceClock(sandbox(), 59);
    expect((await exchangeCode(sandbox(), signedIn.code!)).status).toBe(200);
  });

  it('checks the PKCE verifier: wrong, missing, malformed, or sent when no challenge was', async () => {
    const { challenge } = pkcePair();
    const signedIn = await signIn(sandbox(), JOHN, { codeChallenge: challenge });
    const wrong = await oauthError(await exchangeCode(sandbox(), signedIn.code!, { codeVerifier: pkcePair().verifier }));
    expect(wrong).toMatchObject({ status: 400, error: 'invalid_grant', error_description: 'code_verifier does not match the code_challenge' });
    const missing = await oauthError(await exchangeCode(sandbox(), signedIn.code!));
    expect(missing).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(missing.error_description).toContain('code_verifier is required');
    const malformed = await oauthError(await exchangeCode(sandbox(), signedIn.code!, { codeVerifier: 'short' }));
    expect(malformed.error_description).toContain('43 to 128');
    const withoutChallenge = await signIn(sandbox(), JOHN);
    const downgrade = await oauthError(await exchangeCode(sandbox(), withoutChallenge.code!, { codeVerifier: pkcePair().verifier }));
    expect(downgrade).toMatchObject({ status: 400, error: 'invalid_grant' });
  });

  it('requires the same redirect_uri as the authorization request', async () => {
    const signedIn = await signIn(sandbox(), JOHN);
    const other = await oauthError(await exchangeCode(sandbox(), signedIn.code!, { redirectUri: 'http://localhost:4000/auth/callback' }));
    expect(other).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(other.error_description).toContain('redirect_uri');
    const missing = await oauthError(await tokenRequest(sandbox(), { grant_type: 'authorization_code', code: signedIn.code! }));
    expect(missing).toMatchObject({ status: 400, error: 'invalid_request', error_description: 'redirect_uri is required with grant_type authorization_code' });
    // Failed attempts do not use the code up.
    expect((await exchangeCode(sandbox(), signedIn.code!)).status).toBe(200);
  });

  it('refuses an unknown code and a missing one', async () => {
    expect(await oauthError(await exchangeCode(sandbox(), 'not-a-code'))).toMatchObject({ status: 400, error: 'invalid_grant' });
    const missing = await tokenRequest(sandbox(), { grant_type: 'authorization_code', redirect_uri: TEST_REDIRECT_URI });
    expect(await oauthError(missing)).toMatchObject({ status: 400, error: 'invalid_request' });
  });

  it('expires user tokens after 3600 seconds of sandbox time', async () => {
    const token = await getUserToken(sandbox(), JOHN);
    await advanceClock(sandbox(), 3599);
    expect((await request(`${sandbox().url}/data/v1/accounts`, { headers: bearer(token) })).status).toBe(200);
    await advanceClock(sandbox(), 1);
    const expired = await request(`${sandbox().url}/data/v1/accounts`, { headers: bearer(token) });
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual({ error: 'invalid_token', error_description: 'the access token has expired' });
  });
});

describe('token endpoint: refresh_token grant', () => {
  const sandbox = useSandbox({}, 'each');

  it('rotates: a new access and refresh token for the same user and scopes; the old refresh token stops working', async () => {
    const first = await getUserToken(sandbox(), { username: 'jane', password: 'doe' });
    const second = await refreshUserToken(sandbox(), first.refresh_token);
    expect(second).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'info accounts' });
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    const accounts = await request(`${sandbox().url}/data/v1/accounts`, { headers: bearer(second) });
    expect(accounts.body.results.map((a: { display_name: string }) => a.display_name)).toEqual(['Current Account', 'Savings Account']);
    // Access tokens already out keep working until they expire.
    expect((await request(`${sandbox().url}/data/v1/accounts`, { headers: bearer(first) })).status).toBe(200);

    const reused = await oauthError(await tokenRequest(sandbox(), { grant_type: 'refresh_token', refresh_token: first.refresh_token }));
    expect(reused).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(reused.error_description).toContain('rotate');
    const third = await refreshUserToken(sandbox(), second.refresh_token);
    expect(third.scope).toBe('info accounts');
  });

  it('outlives the access token: refresh after expiry gives a working token', async () => {
    const first = await getUserToken(sandbox(), JOHN);
    await advanceClock(sandbox(), 4000);
    expect((await request(`${sandbox().url}/data/v1/accounts`, { headers: bearer(first) })).status).toBe(401);
    const second = await refreshUserToken(sandbox(), first.refresh_token);
    expect((await request(`${sandbox().url}/data/v1/accounts`, { headers: bearer(second) })).status).toBe(200);
  });

  it('may narrow the scope but never widen it', async () => {
    const first = await getUserToken(sandbox(), JOHN);
    const narrowed = await tokenRequest(sandbox(), { grant_type: 'refresh_token', refresh_token: first.refresh_token, scope: 'info' });
    const body = (await narrowed.json()) as TokenResponse & { refresh_token: string };
    expect(body.scope).toBe('info');
    const accounts = await request(`${sandbox().url}/data/v1/accounts`, { headers: bearer(body.access_token) });
    expect(accounts.status).toBe(403);
    const widened = await tokenRequest(sandbox(), { grant_type: 'refresh_token', refresh_token: body.refresh_token, scope: 'info payments' });
    expect(await oauthError(widened)).toMatchObject({ status: 400, error: 'invalid_scope' });
  });

  it('refuses an unknown refresh token and a missing one', async () => {
    expect(await oauthError(await tokenRequest(sandbox(), { grant_type: 'refresh_token', refresh_token: 'nope' }))).toMatchObject({
      status: 400,
      error: 'invalid_grant',
    });
    expect(await oauthError(await tokenRequest(sandbox(), { grant_type: 'refresh_token' }))).toMatchObject({ status: 400, error: 'invalid_request' });
  });
});

describe('the bank sign-in page', () => {
  const sandbox = useSandbox();

  it('shows a login form carrying the authorization request in hidden fields', async () => {
    const url = authorizeUrl(sandbox(), { state: 'abc', scope: 'info accounts' });
    const page = await request(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const { action, fields } = parseLoginForm(page.text, url);
    expect(action).toBe(`${sandbox().url}/`);
    expect(fields).toEqual({
      response_type: 'code',
      client_id: sandbox().context.client.clientId,
      redirect_uri: TEST_REDIRECT_URI,
      scope: 'info accounts',
      state: 'abc',
    });
    expect(page.text).toContain('john / doe');
  });

  it('escapes a state with markup, and still returns it byte for byte', async () => {
    const state = `"><script>alert('x')</script>&`;
    const url = authorizeUrl(sandbox(), { state });
    const page = await request(url);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('<script>');
    expect(page.text).toContain('&#34;&#62;&#60;script&#62;alert(&#39;x&#39;)&#60;/script&#62;&#38;');
    expect(parseLoginForm(page.text, url).fields.state).toBe(state);
    const signedIn = await signIn(sandbox(), JOHN, { state });
    expect(signedIn.status).toBe(302);
    expect(signedIn.state).toBe(state);
  });

  it('shows the form again with 401 and a message for a wrong password, escaping the username', async () => {
    const wrong = await signIn(sandbox(), { username: 'john<b>', password: 'nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.location).toBeUndefined();
    expect(wrong.html).toContain('The username or password is wrong.');
    expect(wrong.html).toContain('value="john&#60;b&#62;"');
    expect(wrong.html).toContain('<form');
    const empty = await signIn(sandbox(), { username: 'john', password: '' });
    expect(empty.status).toBe(401);
    expect(empty.html).toContain('Enter your username and password.');
  });

  it('never redirects for an unknown client_id or a redirect_uri that is not allow-listed', async () => {
    const base = new URL(authorizeUrl(sandbox()));
    const cases: [string, string][] = [
      ['client_id', 'stranger'],
      ['redirect_uri', 'https://evil.example/callback'],
      ['redirect_uri', 'http://localhost:3999/other-path'],
      ['redirect_uri', 'http://localhost:3999/auth/callback#frag'],
    ];
    for (const [name, value] of cases) {
      const url = new URL(base);
      url.searchParams.set(name, value);
      const page = await request(url.href);
      expect(page.status).toBe(400);
      expect(page.headers.get('location')).toBeNull();
      expect(page.text).toContain('cannot be completed');
    }
    const bare = await request(`${sandbox().url}/`);
    expect(bare.status).toBe(400);
    expect(bare.text).toContain('client_id is required');
  });

  it('accepts any port on each loopback name a browser may use (localhost, 127.0.0.1, [::1])', async () => {
    for (const redirectUri of ['http://127.0.0.1:54321/auth/callback', 'http://localhost:54321/auth/callback', 'http://[::1]:54321/auth/callback']) {
      const signedIn = await signIn(sandbox(), JOHN, { redirectUri });
      expect(signedIn.status).toBe(302);
      expect(signedIn.location!.startsWith(`${redirectUri}?code=`)).toBe(true);
      expect((await exchangeCode(sandbox(), signedIn.code!, { redirectUri })).status).toBe(200);
    }
  });

  it('returns request errors to a trusted redirect_uri, with the state', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ scope: 'info admin' }, 'invalid_scope'],
      [{ code_challenge: pkcePair().challenge, code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge: 'too-short', code_challenge_method: 'S256' }, 'invalid_request'],
      [{ code_challenge_method: 'S256' }, 'invalid_request'],
    ];
    for (const [params, error] of cases) {
      const url = new URL(authorizeUrl(sandbox(), { state: 'keep-me' }));
      for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
      const response = await request(url.href);
      expect(response.status).toBe(302);
      const location = new URL(response.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe(TEST_REDIRECT_URI);
      expect(location.searchParams.get('error')).toBe(error);
      expect(location.searchParams.get('error_description')).toBeTruthy();
      expect(location.searchParams.get('state')).toBe('keep-me');
    }
  });

  it('re-checks the hidden fields on the post: a tampered redirect_uri gets a 400 page, not a redirect', async () => {
    const url = authorizeUrl(sandbox());
    const { fields } = parseLoginForm((await request(url)).text, url);
    const response = await request(`${sandbox().url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, redirect_uri: 'https://evil.example/cb', username: 'john', password: 'doe' }).toString(),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
  });

  it('sends the user back with access_denied when they cancel', async () => {
    const url = authorizeUrl(sandbox(), { state: 's1' });
    const { fields } = parseLoginForm((await request(url)).text, url);
    const response = await request(`${sandbox().url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, action: 'deny' }).toString(),
    });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('s1');
    expect(location.searchParams.get('code')).toBeNull();
  });
});

describe('redirect URIs that are not on a loopback host', () => {
  const sandbox = useSandbox({ redirectUris: ['https://app.example.com/auth/callback?tenant=1'] });

  it('must match exactly, port and query included', async () => {
    const ok = await signIn(sandbox(), JOHN, { redirectUri: 'https://app.example.com/auth/callback?tenant=1' });
    expect(ok.status).toBe(302);
    expect(ok.location).toMatch(/^https:\/\/app\.example\.com\/auth\/callback\?tenant=1&code=[\w-]+&state=/);
    for (const redirectUri of [
      'https://app.example.com:8443/auth/callback?tenant=1',
      'https://app.example.com/auth/callback',
      'http://app.example.com/auth/callback?tenant=1',
    ]) {
      expect((await signIn(sandbox(), JOHN, { redirectUri })).status).toBe(400);
    }
  });
});
