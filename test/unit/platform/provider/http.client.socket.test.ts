import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderHttpClient, type AttemptEvent, type HttpClientConfig } from '../../../../src/platform/provider/http.client';
import { operationDeadline } from '../../../../src/platform/provider/operation-deadline';
import { GatewayError, UpstreamError, UpstreamUnavailableError } from '../../../../src/platform/errors/gateway-errors';
import { DEFAULT_PROVIDER_CALLS } from '../../../helpers/config-defaults';

// Real sockets: what a mock dispatcher cannot show (connection reuse, resets, timeouts).

type Handler = (request: IncomingMessage, response: ServerResponse, index: number) => void;

let server: Server | undefined;
let client: ProviderHttpClient | undefined;
let stats: { requests: number; connections: number; bodies: string[] };

async function start(handler: Handler): Promise<string> {
  stats = { requests: 0, connections: 0, bodies: [] };
  server = createServer((request, response) => {
    const index = stats.requests;
    stats.requests += 1;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      stats.bodies.push(Buffer.concat(chunks).toString());
      handler(request, response, index);
    });
  });
  server.on('connection', () => (stats.connections += 1));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function newClient(config: Partial<HttpClientConfig> = {}): ProviderHttpClient {
  client = new ProviderHttpClient({ ...DEFAULT_PROVIDER_CALLS, backoffBaseMs: 1, backoffCapMs: 5, ...config });
  return client;
}

const ok = (response: ServerResponse) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');

afterEach(async () => {
  const closing = client?.close();
  client = undefined;
  if (server) {
    server.closeAllConnections();
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
  }
  await closing;
});

describe('ProviderHttpClient over real sockets', () => {
  it('reuses one keep-alive connection for sequential requests', async () => {
    const origin = await start((_req, res) => ok(res));
    const http = newClient();
    for (let i = 0; i < 10; i += 1) await http.send({ route: 't', method: 'GET', url: `${origin}/x` });
    expect(stats.requests).toBe(10);
    // undici's pool may open a second socket for the request right after the first (the first socket reports
    // itself free a tick after its body resolves); after that both are reused. No keep-alive would mean 10.
    expect(stats.connections).toBeLessThanOrEqual(2);
  });

  it('retries a GET whose connection was reset mid-request', async () => {
    const origin = await start((req, res, index) => (index === 0 ? req.socket.destroy() : ok(res)));
    const attempts: AttemptEvent[] = [];
    const http = newClient({ onAttempt: (e) => attempts.push(e) });
    await expect(http.send({ route: 't', method: 'GET', url: `${origin}/x` })).resolves.toMatchObject({ body: { ok: true } });
    expect(stats.requests).toBe(2);
    expect(attempts[0]!.status).toBeUndefined();
    expect(attempts[0]!.errorCode).toMatch(/ECONNRESET|UND_ERR_SOCKET/);
  });

  it('does not resend a POST without an idempotency key after a reset', async () => {
    const origin = await start((req, res, index) => (index === 0 ? req.socket.destroy() : ok(res)));
    const http = newClient();
    const error = await http.send({ route: 't', method: 'POST', url: `${origin}/x`, json: { a: 1 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(stats.requests).toBe(1);
  });

  it('resends an idempotent POST after a reset with the same bytes', async () => {
    const origin = await start((req, res, index) => (index === 0 ? req.socket.destroy() : ok(res)));
    const http = newClient();
    await http.send({ route: 't', method: 'POST', url: `${origin}/x`, json: { amount_in_minor: 1, reference: 'é' }, idempotent: true });
    expect(stats.bodies).toEqual(['{"amount_in_minor":1,"reference":"é"}', '{"amount_in_minor":1,"reference":"é"}']);
  });

  // undici checks headers/body timeouts on a ~1 s clock, so each timed-out attempt here costs about a second.
  it('times out a slow answer and retries the GET', async () => {
    const origin = await start((_req, res, index) => {
      if (index === 0) setTimeout(() => ok(res), 3_000).unref();
      else ok(res);
    });
    const attempts: AttemptEvent[] = [];
    const http = newClient({ headersTimeoutMs: 100, onAttempt: (e) => attempts.push(e) });
    await expect(http.send({ route: 't', method: 'GET', url: `${origin}/x` })).resolves.toMatchObject({ status: 200 });
    expect(stats.requests).toBe(2);
    expect(attempts[0]!.errorCode).toBe('UND_ERR_HEADERS_TIMEOUT');
  });

  it('reports an answer that never comes as UPSTREAM_UNAVAILABLE', async () => {
    const origin = await start(() => undefined);
    const http = newClient({ headersTimeoutMs: 100, maxAttempts: 1 });
    const error = (await http.send({ route: 't', method: 'GET', url: `${origin}/y` }).catch((e: unknown) => e)) as GatewayError;
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error.message).toMatch(/did not answer in time/);
  });

  // The answer's headers and first bytes arrive, then nothing: what ends the wait must end it mid-body, and the
  // client must go on working (the stalled connection is dropped, not handed to the next request).
  const stallsAfterFirstBytes = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.url === '/stall') res.writeHead(200, { 'content-type': 'application/json' }).write('{"results":[');
    else ok(res);
  };

  it('ends a body that stalls when the operation deadline passes, and serves the next request', async () => {
    const origin = await start(stallsAfterFirstBytes);
    const http = newClient({ bodyTimeoutMs: 20_000, maxAttempts: 1 });
    const started = performance.now();
    const error = (await http
      .send({ route: 't', method: 'GET', url: `${origin}/stall`, deadline: operationDeadline(200) })
      .catch((e: unknown) => e)) as GatewayError;
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error.message).toMatch(/did not answer in time/);
    await expect(http.send({ route: 't', method: 'GET', url: `${origin}/x` })).resolves.toMatchObject({ body: { ok: true } });
  });

  it("ends a body that stalls when the caller's signal aborts, with that signal's reason", async () => {
    const origin = await start(stallsAfterFirstBytes);
    const http = newClient({ bodyTimeoutMs: 20_000 });
    const controller = new AbortController();
    const pending = http.send({ route: 't', method: 'GET', url: `${origin}/stall`, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('the app gave up')), 100);
    await expect(pending).rejects.toThrow('the app gave up');
    expect(stats.requests).toBe(1);
    await expect(http.send({ route: 't', method: 'GET', url: `${origin}/x` })).resolves.toMatchObject({ body: { ok: true } });
  });

  it('refuses a chunked answer once it passes maxBodyBytes, without reading the rest, and serves the next request', async () => {
    let written = 0;
    const origin = await start((req, res) => {
      if (req.url !== '/large') return ok(res);
      res.writeHead(200, { 'content-type': 'application/json' });
      const piece = Buffer.alloc(16 * 1024, 0x20);
      const timer = setInterval(() => {
        if (res.destroyed || written > 8 * 1024 * 1024) return clearInterval(timer);
        res.write(piece);
        written += piece.length;
      }, 1);
      res.on('close', () => clearInterval(timer));
    });
    const http = newClient({ maxBodyBytes: 64 * 1024, maxAttempts: 1 });
    const error = await http.send({ route: 't', method: 'GET', url: `${origin}/large` }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(written).toBeLessThan(8 * 1024 * 1024);
    await expect(http.send({ route: 't', method: 'GET', url: `${origin}/x` })).resolves.toMatchObject({ body: { ok: true } });
  });

  it('reports a refused connection as UPSTREAM_UNAVAILABLE after its retries', async () => {
    const origin = await start((_req, res) => ok(res));
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
    const attempts: AttemptEvent[] = [];
    const http = newClient({ maxAttempts: 2, onAttempt: (e) => attempts.push(e) });
    const error = (await http.send({ route: 't', method: 'GET', url: `${origin}/x` }).catch((e: unknown) => e)) as GatewayError;
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error.message).toMatch(/could not be reached/);
    expect(attempts.map((a) => a.errorCode)).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
  });
});
