import { generateKeyPairSync } from 'node:crypto';
import { verifyRequestSignature } from '../../../../src/platform/provider/request-signer';
import type { BearerAuth } from '../../../../src/platform/provider/http.client';
import {
  GatewayError,
  UnauthenticatedError,
  UpstreamError,
  UpstreamRateLimitedError,
  UpstreamUnavailableError,
} from '../../../../src/platform/errors/gateway-errors';
import { ProviderResponseError } from '../../../../src/platform/provider/provider-errors';
import { mockProvider, networkError, ORIGIN, problem } from '../../../helpers/mock-provider';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-521' });
const signingKey = { keyId: 'kid-1', privateKey };

let provider: ReturnType<typeof mockProvider>;
afterEach(async () => {
  await provider.close();
});

function staticAuth(token = 'tok-1'): BearerAuth {
  return { token: async () => token };
}

const get = (path = '/thing') => ({ route: 'test.get', method: 'GET' as const, url: `${ORIGIN}${path}` });

describe('ProviderHttpClient retries', () => {
  it('retries a GET on 503 and on 429, and reports each attempt', async () => {
    provider = mockProvider();
    provider.on('GET', '/thing', { status: 503, body: problem(503, 'service-unavailable') }, { status: 429 }, { status: 200, body: { ok: 1 } });
    const response = await provider.http.send<{ ok: number }>(get());
    expect(response).toMatchObject({ status: 200, body: { ok: 1 } });
    expect(provider.attempts.map(({ status, retry, attempt }) => ({ status, retry, attempt }))).toEqual([
      { status: 503, retry: false, attempt: 1 },
      { status: 429, retry: true, attempt: 2 },
      { status: 200, retry: true, attempt: 3 },
    ]);
    expect(provider.attempts.every((a) => a.route === 'test.get' && a.durationMs >= 0)).toBe(true);
  });

  it('retries a GET after a connection reset or refusal', async () => {
    provider = mockProvider();
    provider.on('GET', '/thing', networkError('ECONNRESET'), networkError('ECONNREFUSED'), { status: 200, body: {} });
    await expect(provider.http.send(get())).resolves.toMatchObject({ status: 200 });
    expect(provider.attempts.map((a) => a.errorCode)).toEqual(['ECONNRESET', 'ECONNREFUSED', undefined]);
  });

  it('stops after maxAttempts with UPSTREAM_UNAVAILABLE', async () => {
    provider = mockProvider({ maxAttempts: 3 });
    provider.on('GET', '/thing', { status: 503 }, { status: 502 }, { status: 500 }, { status: 200 });
    const error = await provider.http.send(get()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(provider.requests).toHaveLength(3);
  });

  it('gives up on connection errors with UPSTREAM_UNAVAILABLE and keeps the cause for logs', async () => {
    provider = mockProvider({ maxAttempts: 2 });
    provider.on('GET', '/thing', networkError('ECONNRESET'), networkError('ECONNRESET'));
    const error = (await provider.http.send(get()).catch((e: unknown) => e)) as GatewayError;
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error.message).toMatch(/could not be reached/);
    expect(error.originalError).toBeInstanceOf(ProviderResponseError);
    expect((error.originalError as ProviderResponseError).cause).toMatchObject({ code: 'ECONNRESET' });
  });

  it('uses jittered exponential backoff up to the cap', async () => {
    provider = mockProvider({ maxAttempts: 5, backoffBaseMs: 10, backoffCapMs: 30, random: () => 1 });
    provider.on('GET', '/thing', { status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }, { status: 200 });
    await provider.http.send(get());
    expect(provider.sleeps).toEqual([10, 20, 30, 30]);
  });

  it('does not retry 4xx answers, 501, or a non-retryable failure', async () => {
    provider = mockProvider();
    provider.on('GET', '/a', { status: 404, body: problem(404, 'not-found') });
    provider.on('GET', '/b', { status: 501 });
    provider.on('GET', '/c', { status: 409, body: problem(409, 'payment-not-refundable') });
    for (const path of ['/a', '/b', '/c']) await expect(provider.http.send(get(path))).rejects.toBeInstanceOf(GatewayError);
    expect(provider.requests.map((r) => r.path)).toEqual(['/a', '/b', '/c']);
  });

  it('never retries a POST without an idempotency key', async () => {
    provider = mockProvider();
    provider.on('POST', '/v1/verification', { status: 503 }, { status: 200, body: {} });
    provider.on('POST', '/other', networkError('ECONNRESET'), { status: 200, body: {} });
    const post = (path: string) => ({ route: 'test.post', method: 'POST' as const, url: `${ORIGIN}${path}`, json: { name: 'x' } });
    await expect(provider.http.send(post('/v1/verification'))).rejects.toBeInstanceOf(UpstreamUnavailableError);
    await expect(provider.http.send(post('/other'))).rejects.toBeInstanceOf(UpstreamUnavailableError);
    expect(provider.attempts).toHaveLength(2);
    expect(provider.sleeps).toEqual([]);
  });

  it('retries an idempotent POST with byte-identical body and the same key, re-signed each time', async () => {
    provider = mockProvider({ signingKey, maxAttempts: 4 });
    provider.on('POST', '/v3/payments/p1/refunds', { status: 503 }, networkError('ECONNRESET'), { status: 429 }, { status: 202, body: { id: 'r1' } });
    const response = await provider.http.send<{ id: string }>({
      route: 'payments.createRefund',
      method: 'POST',
      url: `${ORIGIN}/v3/payments/p1/refunds`,
      json: { amount_in_minor: 150, reference: 'refund €1.50' },
      headers: { 'Idempotency-Key': 'key-123' },
      idempotent: true,
      auth: staticAuth(),
      sign: { header: 'Svc-Signature', signedHeaders: ['Idempotency-Key'] },
    });
    expect(response.body).toEqual({ id: 'r1' });
    const sent = provider.requests;
    expect(provider.attempts).toHaveLength(4);
    expect(sent).toHaveLength(3); // the reset attempt never reached the mock's recorder
    for (const request of sent) {
      expect(request.body.equals(sent[0]!.body)).toBe(true);
      expect(request.headers['idempotency-key']).toBe('key-123');
      expect(request.headers['content-type']).toBe('application/json');
      const ok = verifyRequestSignature(
        request.headers['svc-signature']!,
        { method: 'POST', path: '/v3/payments/p1/refunds', headers: request.headers, body: request.body },
        publicKey,
      );
      expect(ok).toBe(true);
    }
    expect(new Set(sent.map((r) => r.headers['svc-signature'])).size).toBe(3);
    expect(sent[0]!.body.toString('utf8')).toBe('{"amount_in_minor":150,"reference":"refund €1.50"}');
  });

  it('honours Retry-After in seconds and as an HTTP date', async () => {
    provider = mockProvider({ retryAfterCapMs: 10_000 });
    const inThreeSeconds = new Date(Date.now() + 3_000).toUTCString();
    provider.on(
      'GET',
      '/thing',
      { status: 429, headers: { 'retry-after': '2' } },
      { status: 503, headers: { 'retry-after': inThreeSeconds } },
      { status: 200 },
    );
    await provider.http.send(get());
    expect(provider.sleeps[0]).toBe(2_000);
    expect(provider.sleeps[1]).toBeGreaterThanOrEqual(1_000);
    expect(provider.sleeps[1]).toBeLessThanOrEqual(4_000);
  });

  it('fails at once with retryAfterSeconds when Retry-After exceeds the cap', async () => {
    provider = mockProvider({ retryAfterCapMs: 5_000 });
    provider.on('GET', '/thing', { status: 429, body: problem(429, 'rate-limit-exceeded'), headers: { 'retry-after': '120' } }, { status: 200 });
    const error = (await provider.http.send(get()).catch((e: unknown) => e)) as GatewayError;
    expect(error).toBeInstanceOf(UpstreamRateLimitedError);
    expect(error.extensions).toEqual({ code: 'UPSTREAM_RATE_LIMITED', retryAfterSeconds: 120, providerError: 'rate-limit-exceeded' });
    expect(provider.requests).toHaveLength(1);
    expect(provider.sleeps).toEqual([]);
  });
});

describe('ProviderHttpClient 401 handling', () => {
  function refreshingAuth() {
    let current = 'old-token';
    const rejected: string[] = [];
    const auth: BearerAuth = {
      token: async () => current,
      onUnauthorized: async (token) => {
        rejected.push(token);
        current = 'new-token';
      },
    };
    return { auth, rejected };
  }

  it('refreshes once and retries with the new token', async () => {
    provider = mockProvider({ maxAttempts: 1 });
    provider.on('GET', '/thing', { status: 401, body: problem(401, 'unauthenticated') }, { status: 200, body: { ok: true } });
    const { auth, rejected } = refreshingAuth();
    await expect(provider.http.send({ ...get(), auth })).resolves.toMatchObject({ body: { ok: true } });
    expect(rejected).toEqual(['old-token']);
    expect(provider.requests.map((r) => r.headers.authorization)).toEqual(['Bearer old-token', 'Bearer new-token']);
  });

  it('treats a second 401 as final: UPSTREAM_ERROR, one refresh', async () => {
    provider = mockProvider();
    provider.on('GET', '/thing', { status: 401, body: { error: 'invalid_token' } }, { status: 401, body: { error: 'invalid_token' } }, { status: 200 });
    const { auth, rejected } = refreshingAuth();
    const error = await provider.http.send({ ...get(), auth }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(rejected).toHaveLength(1);
    expect(provider.requests).toHaveLength(2);
  });

  it('does not refresh the token when the provider rejected the signature', async () => {
    provider = mockProvider({ signingKey });
    provider.on('POST', '/v1/withdrawals', { status: 401, body: problem(401, 'invalid-signature') });
    const { auth, rejected } = refreshingAuth();
    const request = {
      route: 't',
      method: 'POST' as const,
      url: `${ORIGIN}/v1/withdrawals`,
      json: {},
      auth,
      idempotent: true,
      sign: { header: 'X-SVC-Signature' },
    };
    const error = (await provider.http.send(request).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.message).toMatch(/signature/);
    expect(rejected).toEqual([]);
  });

  it('lets the refresh hook end the session: UNAUTHENTICATED passes through', async () => {
    provider = mockProvider();
    provider.on('GET', '/thing', { status: 401, body: { error: 'invalid_token' } });
    const auth: BearerAuth = {
      token: async () => 't',
      onUnauthorized: async () => {
        throw new UnauthenticatedError('Your bank session has ended. Sign in again.');
      },
    };
    await expect(provider.http.send({ ...get(), auth })).rejects.toBeInstanceOf(UnauthenticatedError);
  });
});

describe('ProviderHttpClient requests and responses', () => {
  it('sends the bearer token, accept, X-Request-Id and a form body', async () => {
    provider = mockProvider({ userAgent: 'bankgraph-test' });
    provider.on('POST', '/connect/token', { status: 200, body: { access_token: 'a' } });
    await provider.http.send({
      route: 'auth.clientCredentials',
      method: 'POST',
      url: `${ORIGIN}/connect/token`,
      form: { grant_type: 'client_credentials', scope: 'paydirect payments', absent: undefined },
      requestId: 'req-42',
      auth: staticAuth('tok-9'),
    });
    const [request] = provider.requests;
    expect(request!.headers).toMatchObject({
      accept: 'application/json',
      authorization: 'Bearer tok-9',
      'x-request-id': 'req-42',
      'user-agent': 'bankgraph-test',
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(request!.body.toString()).toBe('grant_type=client_credentials&scope=paydirect+payments');
  });

  it('parses data-API bodies keeping decimal digits', async () => {
    provider = mockProvider();
    provider.on('GET', '/data/v1/accounts/a/balance', { status: 200, body: '{"results":[{"available":100.10,"current":-2.99}]}' });
    const response = await provider.http.send({ ...get('/data/v1/accounts/a/balance'), decimals: true });
    expect(response.body).toEqual({ results: [{ available: '100.10', current: '-2.99' }] });
  });

  it('reports an unreadable success body as UPSTREAM_ERROR', async () => {
    provider = mockProvider();
    provider.on('GET', '/thing', { status: 200, body: '<html>oops' });
    const error = (await provider.http.send(get()).catch((e: unknown) => e)) as GatewayError;
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.message).not.toMatch(/html/);
  });

  it('stops waiting when the caller aborts', async () => {
    provider = mockProvider({ sleep: undefined, backoffBaseMs: 60_000, backoffCapMs: 60_000 });
    provider.on('GET', '/thing', { status: 503 });
    const controller = new AbortController();
    const pending = provider.http.send({ ...get(), signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});
