import { AuthClient } from '../../../../src/platform/provider/auth.client';
import {
  BadUserInputError,
  GatewayError,
  IdempotencyConflictError,
  NotFoundError,
  PaymentNotRefundableError,
  RefundExceedsPaymentError,
  UnauthenticatedError,
  UpstreamError,
  UpstreamRateLimitedError,
  UpstreamUnavailableError,
} from '../../../../src/platform/errors/gateway-errors';
import { ProviderResponseError, upstreamErrorFrom } from '../../../../src/platform/provider/provider-errors';
import { mockProvider, ORIGIN, problem } from '../../../helpers/mock-provider';

type ErrorClass = abstract new (...args: never[]) => GatewayError;

const context = { route: 'test.route', resource: 'payment' };

describe('upstreamErrorFrom', () => {
  it.each<[string, number, unknown, ErrorClass, string]>([
    ['problem invalid-parameters', 400, problem(400, 'invalid-parameters'), BadUserInputError, 'BAD_USER_INPUT'],
    ['data invalid_request', 400, { error: 'invalid_request', error_description: 'bad' }, BadUserInputError, 'BAD_USER_INPUT'],
    ['data invalid_date_range', 400, { error: 'invalid_date_range', error_description: 'from is after to' }, BadUserInputError, 'BAD_USER_INPUT'],
    ['problem unauthenticated', 401, problem(401, 'unauthenticated'), UpstreamError, 'UPSTREAM_ERROR'],
    ['problem invalid-signature', 401, problem(401, 'invalid-signature'), UpstreamError, 'UPSTREAM_ERROR'],
    ['data invalid_token', 401, { error: 'invalid_token' }, UpstreamError, 'UPSTREAM_ERROR'],
    ['oauth invalid_client', 401, { error: 'invalid_client' }, UpstreamError, 'UPSTREAM_ERROR'],
    ['oauth invalid_grant', 400, { error: 'invalid_grant', error_description: 'refresh token revoked' }, UnauthenticatedError, 'UNAUTHENTICATED'],
    ['problem forbidden', 403, problem(403, 'forbidden'), UpstreamError, 'UPSTREAM_ERROR'],
    ['data insufficient_scope', 403, { error: 'insufficient_scope' }, UpstreamError, 'UPSTREAM_ERROR'],
    ['problem not-found', 404, problem(404, 'not-found'), NotFoundError, 'NOT_FOUND'],
    ['data account_not_found', 404, { error: 'account_not_found' }, NotFoundError, 'NOT_FOUND'],
    ['data card_not_found', 404, { error: 'card_not_found' }, NotFoundError, 'NOT_FOUND'],
    ['data task_not_found', 404, { error: 'task_not_found' }, NotFoundError, 'NOT_FOUND'],
    ['payment-not-refundable', 409, problem(409, 'payment-not-refundable'), PaymentNotRefundableError, 'PAYMENT_NOT_REFUNDABLE'],
    ['refund-limit-exceeded', 409, problem(409, 'refund-limit-exceeded'), RefundExceedsPaymentError, 'REFUND_EXCEEDS_PAYMENT'],
    ['idempotency-key-concurrency-conflict', 409, problem(409, 'idempotency-key-concurrency-conflict'), IdempotencyConflictError, 'IDEMPOTENCY_CONFLICT'],
    ['idempotency-key-reuse', 422, problem(422, 'idempotency-key-reuse'), IdempotencyConflictError, 'IDEMPOTENCY_CONFLICT'],
    ['data task_not_ready', 409, { error: 'task_not_ready' }, UpstreamError, 'UPSTREAM_ERROR'],
    ['rate-limit-exceeded', 429, problem(429, 'rate-limit-exceeded'), UpstreamRateLimitedError, 'UPSTREAM_RATE_LIMITED'],
    ['internal-server-error', 500, problem(500, 'internal-server-error'), UpstreamUnavailableError, 'UPSTREAM_UNAVAILABLE'],
    ['service-unavailable', 503, problem(503, 'service-unavailable'), UpstreamUnavailableError, 'UPSTREAM_UNAVAILABLE'],
    ['a 502 with an HTML body', 502, '<html>bad gateway</html>', UpstreamUnavailableError, 'UPSTREAM_UNAVAILABLE'],
    ['an unknown 418', 418, { something: 'else' }, UpstreamError, 'UPSTREAM_ERROR'],
    ['an unknown 409 slug', 409, problem(409, 'something-new'), UpstreamError, 'UPSTREAM_ERROR'],
  ])('%s (HTTP %i)', (_name, status, body, errorClass, code) => {
    const error = upstreamErrorFrom({ status, headers: {}, body }, context);
    expect(error).toBeInstanceOf(errorClass);
    expect(error.extensions.code).toBe(code);
    expect(error.message.length).toBeGreaterThan(20);
  });

  it('keeps the provider body only on a non-enumerable originalError', () => {
    const body = problem(409, 'refund-limit-exceeded');
    const error = upstreamErrorFrom({ status: 409, headers: {}, body }, { ...context, requestId: 'req-1' });
    const original = error.originalError as ProviderResponseError;
    expect(original).toBeInstanceOf(ProviderResponseError);
    expect(original).toMatchObject({ route: 'test.route', status: 409, body, traceId: 'trace-abc', requestId: 'req-1' });
    expect(Object.keys(error)).not.toContain('originalError');
    expect(JSON.stringify(error)).not.toContain('trace-abc');
    expect(original.message).not.toContain('refund-limit-exceeded happened');
  });

  it('gives retryAfterSeconds on 429 from seconds or an HTTP date', () => {
    const seconds = upstreamErrorFrom({ status: 429, headers: { 'retry-after': '7' }, body: {} }, context);
    expect(seconds.extensions).toEqual({ code: 'UPSTREAM_RATE_LIMITED', retryAfterSeconds: 7 });
    const date = new Date(Date.now() + 30_000).toUTCString();
    const fromDate = upstreamErrorFrom({ status: 429, headers: { 'Retry-After': date }, body: {} }, context);
    expect(fromDate.extensions.retryAfterSeconds).toBeGreaterThanOrEqual(28);
    expect(fromDate.extensions.retryAfterSeconds).toBeLessThanOrEqual(30);
  });

  it('names the field on invalid-parameters in GraphQL input terms, without the provider’s words', () => {
    const body = problem(400, 'invalid-parameters', { errors: { reference: ['must be at most 18 characters'], internal_col: ['db says no'] } });
    const error = upstreamErrorFrom({ status: 400, headers: {}, body }, { ...context, fields: { reference: 'input.reference' } });
    expect(error.message).toBe('The provider rejected the request (input.reference). Correct the input and try again.');
    expect(error.extensions).toEqual({ code: 'BAD_USER_INPUT', field: 'input.reference', providerError: 'invalid-parameters' });
  });

  it('never quotes the provider’s description: it goes to the log on originalError', () => {
    const body = { error: 'invalid_request', error_description: 'db password=hunter2 host=10.0.3.7' };
    const error = upstreamErrorFrom({ status: 400, headers: {}, body }, context);
    expect(error.message).not.toMatch(/hunter2|10\.0\.3\.7|password/);
    expect(JSON.stringify(error.extensions)).not.toMatch(/hunter2|10\.0\.3\.7/);
    expect(error.extensions.providerError).toBe('invalid_request');
    expect((error.originalError as ProviderResponseError).body).toEqual(body);
  });

  it('shows only slug-shaped provider error identifiers', () => {
    const error = upstreamErrorFrom({ status: 418, headers: {}, body: { error: 'pw=hunter2 at 10.0.3.7' } }, context);
    expect(error.extensions.providerError).toBeUndefined();
  });

  it('shows only provider error identifiers from the known list, however slug-shaped the others are', () => {
    for (const body of [{ error: 'db01_primary_down' }, problem(409, 'something-new'), { type: 'https://evil.example/#user-jane.doe-at-10.0.3.7' }]) {
      const error = upstreamErrorFrom({ status: 409, headers: {}, body }, context);
      expect(error.extensions.providerError).toBeUndefined();
    }
    for (const slug of ['refund-limit-exceeded', 'rate-limit-exceeded', 'unauthenticated', 'invalid_token', 'unsupported_grant_type']) {
      const body = slug.includes('-') ? problem(409, slug) : { error: slug };
      expect(upstreamErrorFrom({ status: 409, headers: {}, body }, context).extensions.providerError).toBe(slug);
    }
  });

  it('treats token-endpoint 400s as the gateway’s fault, not the user’s input', () => {
    const error = upstreamErrorFrom({ status: 400, headers: {}, body: { error: 'invalid_scope' } }, { route: 'auth.clientCredentials', tokenEndpoint: true });
    expect(error).toBeInstanceOf(UpstreamError);
  });

  it('describes a missing response by its cause', () => {
    const timeout = Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' });
    expect(upstreamErrorFrom(undefined, { route: 'r', cause: timeout }).message).toMatch(/did not answer in time/);
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(upstreamErrorFrom(undefined, { route: 'r', cause: refused })).toBeInstanceOf(UpstreamUnavailableError);
  });
});

describe('no secret in any error message', () => {
  const CLIENT_SECRET = 'cs_live_TOPSECRET_value_1234';
  const ACCESS_TOKEN = 'at_user_ACCESS_TOKEN_abcdef';
  const REFRESH_TOKEN = 'rt_REFRESH_TOKEN_0987654321';
  const JWS = 'eyJhbGciOiJFUzUxMiIsImtpZCI6ImsifQ..AJlcLIj-SJuqajmNwSVjSwDVL9sG1Qz2D1R9pljr86ogXnOFiytKOLlkUqIm8KOZMGUn7J';
  const secrets = [CLIENT_SECRET, ACCESS_TOKEN, REFRESH_TOKEN, JWS, 'AJlcLIj-SJuqajmNwSVjSwDVL9sG1Qz2D1R9pljr86ogX'];

  /** `known`: the secrets the caller passed; logs may keep other text the provider sent, messages never. */
  function expectClean(error: unknown, known: readonly string[]): void {
    expect(error).toBeInstanceOf(GatewayError);
    const gatewayError = error as GatewayError;
    const visible = [
      gatewayError.message,
      String(gatewayError),
      JSON.stringify(gatewayError),
      JSON.stringify(gatewayError.extensions),
      gatewayError.originalError?.message ?? '',
    ];
    for (const text of visible) for (const secret of secrets) expect(text).not.toContain(secret);
    const logged = JSON.stringify((gatewayError.originalError as ProviderResponseError).body ?? null);
    for (const secret of known) expect(logged).not.toContain(secret);
  }

  const echo = `client_secret=${CLIENT_SECRET} refresh_token=${REFRESH_TOKEN} Authorization: Bearer ${ACCESS_TOKEN} Svc-Signature: ${JWS}`;

  let provider: ReturnType<typeof mockProvider> | undefined;
  afterEach(async () => {
    await provider?.close();
    provider = undefined;
  });

  it('from the token endpoint, whatever the provider echoes', async () => {
    const { http, on, requests } = (provider = mockProvider());
    const auth = new AuthClient(http, { authUrl: ORIGIN, clientId: 'client-1', clientSecret: CLIENT_SECRET });
    for (const [status, body] of [
      [400, { error: 'invalid_grant', error_description: echo }],
      [400, { error: 'invalid_request', error_description: echo }],
      [401, { error: 'invalid_client', error_description: echo }],
      [500, echo],
    ] as const) {
      on('POST', '/connect/token', { status, body });
      expectClean(await auth.refresh(REFRESH_TOKEN).catch((e: unknown) => e), [CLIENT_SECRET, REFRESH_TOKEN]);
    }
    expect(requests[0]!.body.toString()).toContain(`client_secret=${CLIENT_SECRET}`);
  });

  it('from a provider API echoing credentials in field errors and details', async () => {
    const { http, on } = (provider = mockProvider());
    const bodies = [
      problem(400, 'invalid-parameters', { errors: { reference: [echo], [ACCESS_TOKEN]: ['bad'] } }),
      problem(400, 'invalid-parameters', { errors: { [ACCESS_TOKEN]: ['bad'] } }),
      problem(400, 'invalid-parameters', { detail: echo }),
      { status: 400, error: 'invalid_request', error_description: echo },
      problem(401, 'unauthenticated', { detail: echo }),
      problem(409, 'refund-limit-exceeded', { detail: echo }),
      problem(418, 'teapot', { detail: echo }),
    ];
    for (const body of bodies) {
      on('GET', '/thing', { status: body.status as number, body });
      const request = { route: 'test', method: 'GET' as const, url: `${ORIGIN}/thing`, auth: { token: async () => ACCESS_TOKEN } };
      expectClean(await http.send(request).catch((e: unknown) => e), [ACCESS_TOKEN]);
    }
  });

  it('leaves token-shaped text out even when the caller did not list it', () => {
    const body = problem(400, 'invalid-parameters', { detail: `token ${JWS} rejected; key ${'x'.repeat(64)}` });
    const error = upstreamErrorFrom({ status: 400, headers: {}, body }, { route: 'r' });
    expect(error.message).not.toContain(JWS);
    expect(error.message).not.toContain('x'.repeat(64));
  });
});
