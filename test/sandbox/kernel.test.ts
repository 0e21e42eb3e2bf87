import { generateKeyPairSync } from 'node:crypto';
import { sandboxOptionsFromEnv } from '../../src/sandbox/main';
import { createSandbox } from '../../src/sandbox/sandbox';
import { generateSigningKey } from '../../src/sandbox/signing';
import { bearer, exchangeCode, getUserToken, signIn, type TokenResponse } from '../helpers/sandbox-auth';
import { request, useSandbox, type RawResponse } from '../helpers/sandbox-server';

const PROBLEM_BASE = 'https://docs.truelayer.com/docs/error-types#';
const JOHN = { username: 'john', password: 'doe' };

function control(url: string, method: string, path: string, body?: unknown): Promise<RawResponse> {
  return request(`${url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('faults', () => {
  const sandbox = useSandbox({}, 'each');
  let john: TokenResponse;
  beforeEach(async () => {
    john = await getUserToken(sandbox(), JOHN);
  });
  const accounts = (): Promise<RawResponse> => request(`${sandbox().url}/data/v1/accounts`, { headers: bearer(john) });
  const addFault = async (spec: object): Promise<void> => {
    const response = await control(sandbox().url, 'POST', '/sandbox/faults', spec);
    expect(response.status).toBe(201);
  };

  it('answers a status with Retry-After for `times` requests, in the route family shape, then serves normally', async () => {
    await addFault({ match: 'GET /data/v1/accounts', status: 429, retryAfter: 7, times: 2 });
    for (let i = 0; i < 2; i++) {
      const limited = await accounts();
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('7');
      expect(limited.body).toEqual({ error: 'rate_limit_exceeded', error_description: 'injected fault: 429' });
    }
    expect((await accounts()).status).toBe(200);
    expect((await control(sandbox().url, 'GET', '/sandbox/faults')).body).toEqual({ faults: [] });
  });

  it('answers problem+json on v1/v3 routes, and `*` matches one path segment', async () => {
    await addFault({ match: 'POST /v1/*', status: 503, times: 1 });
    const response = await request(`${sandbox().url}/v1/verification`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(john) },
      body: JSON.stringify({ name: 'John Doe' }),
    });
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.body).toMatchObject({ type: `${PROBLEM_BASE}service-unavailable`, status: 503 });
  });

  it('keeps an unlimited fault until DELETE /sandbox/faults', async () => {
    await addFault({ match: '/data/v1/**', status: 500 });
    expect((await accounts()).status).toBe(500);
    expect((await accounts()).body.error).toBe('internal_error');
    const listed = await control(sandbox().url, 'GET', '/sandbox/faults');
    expect(listed.body.faults).toEqual([expect.objectContaining({ match: '/data/v1/**', status: 500 })]);
    expect((await control(sandbox().url, 'DELETE', '/sandbox/faults')).body).toEqual({ faults: [] });
    expect((await accounts()).status).toBe(200);
  });

  it('resets the connection', async () => {
    await addFault({ match: 'GET /data/v1/accounts', reset: true, times: 1 });
    await expect(accounts()).rejects.toThrow('fetch failed');
    expect((await accounts()).status).toBe(200);
  });

  it('answers a malformed body with 200', async () => {
    await addFault({ match: 'GET /data/v1/accounts', malformed: true, times: 1 });
    const response = await accounts();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(() => JSON.parse(response.text)).toThrow(SyntaxError);
  });

  it('answers a given JSON body with any status, e.g. an odd 200 from the data API', async () => {
    await addFault({ match: 'GET /data/v1/accounts', body: { results: [null] }, times: 1 });
    const odd = await accounts();
    expect(odd.status).toBe(200);
    expect(odd.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(odd.text)).toEqual({ results: [null] });
    await addFault({ match: 'GET /data/v1/accounts', status: 409, body: { title: 'still processing' }, times: 1 });
    const conflict = await accounts();
    expect([conflict.status, JSON.parse(conflict.text)]).toEqual([409, { title: 'still processing' }]);
    expect((await accounts()).status).toBe(200);
  });

  it('with afterProcessing and a body, does the work and answers the body instead', async () => {
    const signedIn = await signIn(sandbox(), JOHN);
    await addFault({ match: 'POST /connect/token', status: 409, body: { error: 'processing' }, afterProcessing: true, times: 1 });
    const lost = await exchangeCode(sandbox(), signedIn.code!);
    expect([lost.status, await lost.json()]).toEqual([409, { error: 'processing' }]);
    const retried = await exchangeCode(sandbox(), signedIn.code!);
    expect(await retried.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('already been used') });
  });

  it('adds latency', async () => {
    await addFault({ match: 'GET /data/v1/accounts', latencyMs: 300, times: 1 });
    const started = performance.now();
    expect((await accounts()).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    const again = performance.now();
    await accounts();
    expect(performance.now() - again).toBeLessThan(250);
  });

  it('with afterProcessing, does the work and then loses the answer', async () => {
    const signedIn = await signIn(sandbox(), JOHN);
    await addFault({ match: 'POST /connect/token', status: 500, afterProcessing: true, times: 1 });
    const lost = await exchangeCode(sandbox(), signedIn.code!);
    expect(lost.status).toBe(500);
    const retried = await exchangeCode(sandbox(), signedIn.code!);
    expect(await retried.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('already been used') });
  });

  it('never applies to control routes', async () => {
    await addFault({ match: '/**', status: 500 });
    expect((await control(sandbox().url, 'GET', '/sandbox/clock')).status).toBe(200);
    expect((await accounts()).status).toBe(500);
  });

  it.each([
    [{}, 'match must be a string'],
    [{ match: '/x' }, 'give at least one of status, body, reset, malformed or latencyMs'],
    [{ match: '/x', status: 200 }, 'status must be an integer from 400 to 599 (or from 200 with a body)'],
    [{ match: '/x', status: 199, body: {} }, 'status must be an integer from 200 to 599'],
    [{ match: '/x', body: {}, reset: true }, 'body cannot be combined with reset or malformed'],
    [{ match: '/x', status: 500, times: -1 }, 'times must be a non-negative integer'],
    [{ match: '/x', status: 500, retryAfter: 1.5 }, 'retryAfter must be a non-negative integer'],
    [{ match: '/x', reset: 'yes' }, 'reset must be a boolean'],
    [{ match: '/x', latencyMs: 10, afterProcessing: true }, 'afterProcessing needs status, body, reset or malformed'],
    ['[1,2]', 'the body must be a JSON object'],
    ['{"match":', 'the body is not valid JSON'],
  ])('refuses the fault %j with 400', async (spec, message) => {
    const response = await control(sandbox().url, 'POST', '/sandbox/faults', spec);
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_request');
    expect(response.body.error_description).toContain(message);
  });
});

describe('SANDBOX latency option', () => {
  const sandbox = useSandbox({ latencyMs: 200 });

  it('delays provider routes but not control routes', async () => {
    let started = performance.now();
    await request(`${sandbox().url}/.well-known/jwks`);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    started = performance.now();
    await request(`${sandbox().url}/sandbox/clock`);
    expect(performance.now() - started).toBeLessThan(150);
  });
});

describe('request log', () => {
  const sandbox = useSandbox();

  it('records provider calls with method, path, query and status, not control calls, until cleared', async () => {
    await control(sandbox().url, 'DELETE', '/sandbox/requests');
    await request(`${sandbox().url}/data/v1/accounts?async=false`);
    await request(`${sandbox().url}/nowhere`);
    await control(sandbox().url, 'GET', '/sandbox/clock');
    const log = await control(sandbox().url, 'GET', '/sandbox/requests');
    expect(log.body.requests).toEqual([
      expect.objectContaining({ method: 'GET', path: '/data/v1/accounts', query: { async: 'false' }, status: 401 }),
      expect.objectContaining({ method: 'GET', path: '/nowhere', query: {}, status: 404 }),
    ]);
    const [first] = log.body.requests;
    expect(Number.isNaN(Date.parse(first.time))).toBe(false);
    expect(first.endedMs).toBeGreaterThanOrEqual(first.startedMs);
    expect((await control(sandbox().url, 'DELETE', '/sandbox/requests')).body).toEqual({ requests: [] });
    expect((await control(sandbox().url, 'GET', '/sandbox/requests')).body).toEqual({ requests: [] });
  });
});

describe('sandbox clock', () => {
  const sandbox = useSandbox({ timeScale: 2 });

  it('reports and advances sandbox time', async () => {
    const before = await control(sandbox().url, 'GET', '/sandbox/clock');
    expect(before.body).toEqual({ now: expect.any(String), timeScale: 2 });
    const advanced = await control(sandbox().url, 'POST', '/sandbox/clock', { advanceSeconds: 86_400 });
    expect(advanced.status).toBe(200);
    const skipped = Date.parse(advanced.body.now) - Date.parse(before.body.now);
    expect(skipped).toBeGreaterThanOrEqual(86_400_000);
    expect(skipped).toBeLessThan(86_400_000 + 10_000);
  });

  it.each([[{ advanceSeconds: -1 }], [{ advanceSeconds: '60' }], [{}], [{ advanceSeconds: 1e300 }]])('refuses %j with 400 and keeps working', async (body) => {
    const response = await control(sandbox().url, 'POST', '/sandbox/clock', body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('advanceSeconds must be a number') });
    expect((await control(sandbox().url, 'GET', '/sandbox/clock')).status).toBe(200);
  });
});

describe('fixtures route', () => {
  const sandbox = useSandbox();

  it('serves the client, the users with their bank logins, and the payments, keeping decimal digits', async () => {
    const response = await control(sandbox().url, 'GET', '/sandbox/fixtures');
    expect(response.status).toBe(200);
    expect(response.body.client).toEqual({ client_id: 'bankgraph-sandbox', redirect_uris: sandbox().context.client.redirectUris });
    expect(
      response.body.users.map((user: { username: string; password: string; providerId: string }) => `${user.username}/${user.password}@${user.providerId}`),
    ).toEqual([
      'john/doe@mock',
      'jane/doe@mock',
      'lee/doe@mock',
      'sam/doe@mock',
      'sam/doe@mock-north',
      'cara/doe@mock',
      'cora/doe@mock',
      'nora/doe@mock',
      'ada/doe@mock',
      'ben/doe@mock',
      'alexsr/doe@mock',
      'alexjr/doe@mock',
      'minglee/doe@mock',
      'leeming/doe@mock',
    ]);
    // ada and ben share one joint account (both its holders), and each has an account of their own.
    type Listed = { username: string; accounts: { account: { account_id: string; account_number: { iban: string } }; holders: string[] }[] };
    const [ada, ben] = ['ada', 'ben'].map((name) => (response.body.users as Listed[]).find((user) => user.username === name)!);
    const joint = ada!.accounts.filter((item) => ben!.accounts.some((other) => other.account.account_id === item.account.account_id));
    expect(joint.map((item) => item.holders)).toEqual([['Ada Green', 'Ben Green']]);
    expect(ben!.accounts.find((item) => item.account.account_id === joint[0]!.account.account_id)!.account.account_number.iban).toBe(
      joint[0]!.account.account_number.iban,
    );
    expect([ada!.accounts.length, ben!.accounts.length]).toEqual([2, 2]);
    expect(response.body.banks).toEqual([
      { providerId: 'mock', name: 'Mock Bank' },
      { providerId: 'mock-north', name: 'Mock North Bank' },
    ]);
    expect(Array.isArray(response.body.payments)).toBe(true);
    const overdraft = sandbox().context.fixtures.users[0]!.accounts[0]!.balance.overdraft.text;
    expect(overdraft).toBe('1500.00');
    expect(response.text).toContain('"overdraft":1500.00');
  });
});

describe('unknown routes and methods', () => {
  const sandbox = useSandbox();

  it('answers 404 in each family shape', async () => {
    const problem = await request(`${sandbox().url}/v9/nothing`);
    expect(problem.status).toBe(404);
    expect(problem.headers.get('content-type')).toBe('application/problem+json');
    expect(problem.body).toMatchObject({ type: `${PROBLEM_BASE}not-found`, status: 404, detail: 'no GET route at /v9/nothing' });
    for (const path of ['/data/v1/nothing', '/connect/nothing', '/sandbox/nothing']) {
      const oauth = await request(`${sandbox().url}${path}`);
      expect(oauth.status).toBe(404);
      expect(oauth.body).toEqual({ error: 'not_found', error_description: `no GET route at ${path}` });
    }
  });

  it('answers 405 for a known path with another method', async () => {
    const oauth = await request(`${sandbox().url}/connect/token`);
    expect(oauth.status).toBe(405);
    expect(oauth.body.error).toBe('method_not_allowed');
    const problem = await request(`${sandbox().url}/v1/verification`, { method: 'DELETE' });
    expect(problem.status).toBe(405);
    expect(problem.body.type).toBe(`${PROBLEM_BASE}method-not-allowed`);
  });
});

describe('body size limit', () => {
  const sandbox = useSandbox();
  const big = 'x'.repeat(300 * 1024);

  it('answers 413 in the OAuth shape on the token endpoint', async () => {
    const response = await request(`${sandbox().url}/connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: big,
    });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ error: 'invalid_request', error_description: 'request body exceeds 262144 bytes' });
  });

  it('answers 413 payload-too-large problem+json on v1', async () => {
    const response = await request(`${sandbox().url}/v1/verification`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    expect(response.status).toBe(413);
    expect(response.body).toMatchObject({ type: `${PROBLEM_BASE}payload-too-large`, status: 413 });
  });
});

describe('control routes for configuration', () => {
  const sandbox = useSandbox();

  it('registers a P-521 signing key and refuses anything else', async () => {
    const p521 = generateSigningKey().publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const ok = await control(sandbox().url, 'POST', '/sandbox/signing-keys', { kid: 'k-1', publicKeyPem: p521 });
    expect(ok.status).toBe(201);
    expect(ok.body).toEqual({ kid: 'k-1' });
    expect(sandbox().context.client.signingKeys.has('k-1')).toBe(true);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const cases: [unknown, string][] = [
      [{ publicKeyPem: p521 }, 'send { "kid": string, "publicKeyPem": string }'],
      [{ kid: '', publicKeyPem: p521 }, 'send { "kid": string, "publicKeyPem": string }'],
      [{ kid: 'k-2', publicKeyPem: 42 }, 'send { "kid": string, "publicKeyPem": string }'],
      [{ kid: 'k-2', publicKeyPem: 'not a pem' }, 'publicKeyPem is not a PEM-encoded public key'],
      [{ kid: 'k-2', publicKeyPem: rsa }, 'must be an EC P-521 public key'],
      [{ kid: 'k-2', publicKeyPem: p256 }, 'must be an EC P-521 public key'],
    ];
    for (const [body, message] of cases) {
      const response = await control(sandbox().url, 'POST', '/sandbox/signing-keys', body);
      expect(response.status).toBe(400);
      expect(response.body.error_description).toContain(message);
    }
    const wrongType = await request(`${sandbox().url}/sandbox/signing-keys`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
    expect(wrongType.status).toBe(400);
    expect(sandbox().context.client.signingKeys.has('k-2')).toBe(false);
  });

  it('sets the payments webhook URL, refusing anything but an http(s) URL', async () => {
    expect((await control(sandbox().url, 'POST', '/sandbox/config', {})).body).toEqual({ paymentsWebhookUrl: null });
    for (const paymentsWebhookUrl of ['ftp://example.com/hooks', 'not a url', 42]) {
      const response = await control(sandbox().url, 'POST', '/sandbox/config', { paymentsWebhookUrl });
      expect(response.status).toBe(400);
      expect(response.body.error_description).toBe('paymentsWebhookUrl must be an http(s) URL');
    }
    const set = await control(sandbox().url, 'POST', '/sandbox/config', { paymentsWebhookUrl: 'http://127.0.0.1:9/hooks' });
    expect(set.body).toEqual({ paymentsWebhookUrl: 'http://127.0.0.1:9/hooks' });
    expect(sandbox().context.client.paymentsWebhookUrl).toBe('http://127.0.0.1:9/hooks');
  });

  it('serves the webhook signing key as a public JWKS', async () => {
    const jwks = await request(`${sandbox().url}/.well-known/jwks`);
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys).toEqual([
      { kty: 'EC', crv: 'P-521', x: expect.any(String), y: expect.any(String), kid: 'sandbox-webhooks-1', alg: 'ES512', use: 'sig' },
    ]);
  });

  it('lists webhook deliveries', async () => {
    expect((await control(sandbox().url, 'GET', '/sandbox/webhooks')).body).toEqual({ deliveries: [] });
  });
});

describe('createSandbox options', () => {
  it('uses the given client credentials and closes cleanly', async () => {
    const sandbox = await createSandbox({ port: 0, clientId: 'my-app', clientSecret: 's3cret' });
    try {
      const response = await fetch(`${sandbox.url}/connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials&client_id=my-app&client_secret=s3cret',
      });
      expect(response.status).toBe(200);
    } finally {
      await sandbox.close();
    }
    await expect(fetch(`${sandbox.url}/sandbox/clock`)).rejects.toThrow();
  });
});

describe('npm run sandbox configuration', () => {
  it('defaults to port 4010, no latency, time scale 1, generated credentials', () => {
    expect(sandboxOptionsFromEnv({})).toEqual({ port: 4010, latencyMs: 0, timeScale: 1, clientId: undefined, clientSecret: undefined });
  });

  it('reads every variable', () => {
    const env = { SANDBOX_PORT: '0', SANDBOX_LATENCY_MS: '25', SANDBOX_TIME_SCALE: '60', SANDBOX_CLIENT_ID: 'app', SANDBOX_CLIENT_SECRET: 'shh' };
    expect(sandboxOptionsFromEnv(env)).toEqual({ port: 0, latencyMs: 25, timeScale: 60, clientId: 'app', clientSecret: 'shh' });
    expect(sandboxOptionsFromEnv({ SANDBOX_TIME_SCALE: '0.5' })).toMatchObject({ timeScale: 0.5 });
  });

  it.each([
    ['SANDBOX_PORT', '70000', 'an integer port from 0 to 65535'],
    ['SANDBOX_PORT', 'http', 'an integer port from 0 to 65535'],
    ['SANDBOX_LATENCY_MS', '-5', 'an integer number of milliseconds'],
    ['SANDBOX_TIME_SCALE', '0', 'a positive number'],
    ['SANDBOX_TIME_SCALE', 'fast', 'a positive number'],
    ['SANDBOX_CLIENT_ID', 'has space', '1 to 200 printable ASCII characters without spaces'],
  ])('refuses %s=%s, naming the variable and what it accepts', (name, value, accepts) => {
    const result = sandboxOptionsFromEnv({ [name]: value });
    expect(result).toEqual({ error: expect.stringContaining(`${name}=${JSON.stringify(value)} is not valid: it accepts ${accepts}`) });
  });
});

describe('two banks and added accounts', () => {
  const sandbox = useSandbox({}, 'each');

  const accountsOf = async (token: TokenResponse): Promise<{ account_id: string; display_name: string; provider: { provider_id: string } }[]> => {
    const response = await request(`${sandbox().url}/data/v1/accounts`, { headers: bearer(token) });
    expect(response.status).toBe(200);
    return (response.body as { results: { account_id: string; display_name: string; provider: { provider_id: string } }[] }).results;
  };

  it("signs a login in at the bank picked on the page, showing only that bank's accounts", async () => {
    const atNorth = await accountsOf(await getUserToken(sandbox(), { username: 'sam', password: 'doe', bank: 'mock-north' }));
    const atMock = await accountsOf(await getUserToken(sandbox(), { username: 'sam', password: 'doe' }));
    expect(new Set(atNorth.map((account) => account.provider.provider_id))).toEqual(new Set(['mock-north']));
    expect(new Set(atMock.map((account) => account.provider.provider_id))).toEqual(new Set(['mock']));
    expect(atNorth.some((account) => atMock.some((other) => other.account_id === account.account_id))).toBe(false);
    expect((await signIn(sandbox(), { username: 'john', password: 'doe', bank: 'mock-north' })).status).toBe(401);
    expect((await signIn(sandbox(), { username: 'john', password: 'doe', bank: 'elsewhere' })).status).toBe(400);
  });

  it('opens another account for a login with POST /sandbox/users/:username/accounts', async () => {
    const token = await getUserToken(sandbox(), { username: 'jane', password: 'doe' });
    const before = await accountsOf(token);
    const added = await control(sandbox().url, 'POST', '/sandbox/users/jane/accounts', { displayName: 'Rainy Day' });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ display_name: 'Rainy Day', provider: { provider_id: 'mock' } });
    const after = await accountsOf(token);
    expect(after.map((account) => account.account_id)).toEqual([
      ...before.map((account) => account.account_id),
      (added.body as { account_id: string }).account_id,
    ]);
    expect((await control(sandbox().url, 'POST', '/sandbox/users/nobody/accounts', {})).status).toBe(404);
    expect((await control(sandbox().url, 'POST', '/sandbox/users/jane/accounts', { bank: 'mock-north' })).status).toBe(404);
    expect((await control(sandbox().url, 'POST', '/sandbox/users/jane/accounts', { displayName: '' })).status).toBe(400);
  });
});
