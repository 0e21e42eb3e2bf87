import { operationDeadline } from '../../../../src/platform/provider/operation-deadline';
import { GatewayError, UpstreamError, UpstreamUnavailableError } from '../../../../src/platform/errors/gateway-errors';
import { mockProvider, ORIGIN, problem } from '../../../helpers/mock-provider';

let provider: ReturnType<typeof mockProvider>;
afterEach(async () => {
  await provider.close();
});

const get = (path = '/thing') => ({ route: 'test.get', method: 'GET' as const, url: `${ORIGIN}${path}` });

describe('operation deadline', () => {
  it('aborts a slow answer when the operation’s deadline passes, instead of waiting out the HTTP timeouts', async () => {
    provider = mockProvider({ headersTimeoutMs: 20_000 });
    provider.agent.get(ORIGIN).intercept({ method: 'GET', path: '/thing' }).reply(200, '{}').delay(3_000);
    const started = performance.now();
    const error = (await provider.http.send({ ...get(), deadline: operationDeadline(200) }).catch((e: unknown) => e)) as GatewayError;
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error.message).toMatch(/did not answer in time/);
  });

  it('does not retry when the backoff would end after the deadline', async () => {
    provider = mockProvider({ backoffBaseMs: 1_000, backoffCapMs: 1_000 });
    provider.on('GET', '/thing', { status: 503, body: problem(503, 'service-unavailable') }, { status: 503 }, { status: 200, body: {} });
    const error = await provider.http.send({ ...get(), deadline: operationDeadline(300) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(provider.requests).toHaveLength(1);
    expect(provider.sleeps).toEqual([]);
  });

  it('retries as before when the backoff fits', async () => {
    provider = mockProvider();
    provider.on('GET', '/thing', { status: 503 }, { status: 200, body: { ok: true } });
    const response = await provider.http.send({ ...get(), deadline: operationDeadline(5_000) });
    expect(response.body).toEqual({ ok: true });
    expect(provider.requests).toHaveLength(2);
  });
});

describe('circuit breaker per route', () => {
  it('fails fast after consecutive failures, per route, and lets a trial through after the cool-down', async () => {
    const states: [string, string][] = [];
    provider = mockProvider({ maxAttempts: 1, breaker: { failures: 2, cooldownMs: 150 }, onCircuitStateChange: (route, state) => states.push([route, state]) });
    provider.on('GET', '/thing', { status: 503 }, { status: 502 });
    for (let i = 0; i < 2; i += 1) expect(await provider.http.send(get()).catch((e: unknown) => e)).toBeInstanceOf(UpstreamUnavailableError);
    const fast = (await provider.http.send(get()).catch((e: unknown) => e)) as GatewayError;
    expect(fast).toBeInstanceOf(UpstreamUnavailableError);
    expect(fast.message).toMatch(/not calling it/);
    expect(provider.requests).toHaveLength(2);
    expect(provider.http.breakers.state('test.get')).toBe('open');
    expect(states).toEqual([['test.get', 'open']]);

    // Another route is not affected.
    provider.on('GET', '/other', { status: 200, body: {} });
    await provider.http.send({ ...get('/other'), route: 'test.other' });

    await new Promise((resolve) => setTimeout(resolve, 200));
    provider.on('GET', '/thing', { status: 200, body: { back: true } });
    expect((await provider.http.send(get())).body).toEqual({ back: true });
    expect(provider.http.breakers.state('test.get')).toBe('closed');
  });

  it('does not count the provider refusing our request (4xx) as a failure', async () => {
    provider = mockProvider({ maxAttempts: 1, breaker: { failures: 2, cooldownMs: 10_000 } });
    provider.on('GET', '/thing', { status: 404 }, { status: 400 }, { status: 404 });
    for (let i = 0; i < 3; i += 1) await provider.http.send(get()).catch(() => undefined);
    expect(provider.requests).toHaveLength(3);
    expect(provider.http.breakers.state('test.get')).toBe('closed');
  });
});

describe('circuit breaker per bank connection', () => {
  const of = (connectionId: string) => ({ connectionId, token: async () => `token-of-${connectionId}` });
  const tx = (connectionId: string, path = '/tx') => ({ ...get(path), route: 'data.tx', auth: of(connectionId) });

  it("opens for the failing connection only: another connection's calls on the same route still go through", async () => {
    const changes: unknown[] = [];
    provider = mockProvider({ maxAttempts: 1, breaker: { failures: 2, cooldownMs: 10_000 }, onConnectionCircuitChange: (change) => changes.push(change) });
    provider.on('GET', '/tx', { status: 503 }, { status: 503 });
    for (let i = 0; i < 2; i += 1) await provider.http.send(tx('jane')).catch(() => undefined);
    const fast = (await provider.http.send(tx('jane')).catch((e: unknown) => e)) as GatewayError;
    expect(fast.message).toMatch(/not calling it/);
    expect(provider.requests).toHaveLength(2);
    expect(provider.http.breakers.connectionState('data.tx', 'jane')).toBe('open');

    provider.on('GET', '/tx', { status: 200, body: { ok: true } });
    expect((await provider.http.send(tx('john'))).body).toEqual({ ok: true });
    expect(provider.http.breakers.state('data.tx')).toBe('closed');
    expect(changes).toEqual([{ route: 'data.tx', connectionId: 'jane', state: 'open', openOnRoute: 1 }]);
  });

  it('opens the route for every connection once failures span PROVIDER_BREAKER_ROUTE_CONNECTIONS connections with no success between', async () => {
    provider = mockProvider({ maxAttempts: 1, breaker: { failures: 1, cooldownMs: 150, spreadConnections: 2 } });
    provider.on('GET', '/tx', { status: 503 }, { status: 503 }, { status: 503 });
    await provider.http.send(tx('a')).catch(() => undefined);
    await provider.http.send(tx('b')).catch(() => undefined);
    expect(provider.http.breakers.state('data.tx')).toBe('closed');
    // Tripped: the next call, whoever makes it, is the route's; failing too, it opens the route.
    await provider.http.send(tx('c')).catch(() => undefined);
    expect(provider.http.breakers.state('data.tx')).toBe('open');
    const fast = (await provider.http.send(tx('d')).catch((e: unknown) => e)) as GatewayError;
    expect(fast.message).toMatch(/not calling it/);
    expect(provider.requests).toHaveLength(3);

    await new Promise((resolve) => setTimeout(resolve, 200));
    provider.on('GET', '/tx', { status: 200, body: { back: true } });
    expect((await provider.http.send(tx('d'))).body).toEqual({ back: true });
    expect(provider.http.breakers.state('data.tx')).toBe('closed');
  });

  it('does not open the route when a success on it comes between the failing connections', async () => {
    provider = mockProvider({ maxAttempts: 1, breaker: { failures: 1, cooldownMs: 10_000, spreadConnections: 2 } });
    provider.on('GET', '/tx', { status: 503 }, { status: 200, body: {} }, { status: 503 }, { status: 200, body: { still: 'served' } });
    await provider.http.send(tx('a')).catch(() => undefined);
    await provider.http.send(tx('ok'));
    await provider.http.send(tx('b')).catch(() => undefined);
    expect((await provider.http.send(tx('c'))).body).toEqual({ still: 'served' });
    expect(provider.http.breakers.state('data.tx')).toBe('closed');
  });
});

describe('provider body size cap', () => {
  it('refuses an answer over maxBodyBytes with UPSTREAM_ERROR, whether or not it declares its length', async () => {
    provider = mockProvider({ maxBodyBytes: 1_024 });
    const big = JSON.stringify({ results: ['x'.repeat(5_000)] });
    provider.on('GET', '/thing', { status: 200, body: big });
    provider.agent
      .get(ORIGIN)
      .intercept({ method: 'GET', path: '/thing' })
      .reply(200, big, { headers: { 'content-length': String(big.length) } });
    for (let i = 0; i < 2; i += 1) {
      const error = (await provider.http.send(get()).catch((e: unknown) => e)) as GatewayError;
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error.extensions.code).toBe('UPSTREAM_ERROR');
      expect(error.message).toMatch(/PROVIDER_MAX_BODY_BYTES/);
    }
  });

  it('reads an answer under the cap as before', async () => {
    provider = mockProvider({ maxBodyBytes: 1_024 });
    provider.on('GET', '/thing', { status: 200, body: { ok: true } });
    expect((await provider.http.send(get())).body).toEqual({ ok: true });
  });
});
