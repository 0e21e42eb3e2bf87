import { randomBytes } from 'node:crypto';
import { fixtures, injectFault, paymentsIn, REFUND_PAYMENT } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

const REFUND_UPDATED = 'subscription Refunds($paymentId: ID!) { refundUpdated(paymentId: $paymentId) { id status } }';

/** Metric value of one series in Prometheus text, or undefined when the series is absent. */
function sample(metrics: string, series: string): number | undefined {
  const line = metrics.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('operations', () => {
  afterEach(async () => {
    await disposeWsClients();
  });

  describe('health, readiness and metrics', () => {
    let stack: Stack;

    beforeAll(async () => {
      stack = await startStack({ env: { METRICS_TOKEN: 'metrics-token-0123456789' } });
    });

    afterAll(async () => {
      await stack?.close();
    });

    const metrics = async (): Promise<string> => {
      const response = await fetch(`${stack.gateway.url}/metrics`, { headers: { authorization: 'Bearer metrics-token-0123456789' } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      return response.text();
    };

    it('answers /healthz and /readyz', async () => {
      const health = await fetch(`${stack.gateway.url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
      const ready = await fetch(`${stack.gateway.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready' });
    });

    it('keeps /metrics behind METRICS_TOKEN when one is set', async () => {
      expect((await fetch(`${stack.gateway.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${stack.gateway.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    });

    it('counts HTTP requests, GraphQL operations, provider calls, retries, cache hits and misses, and open subscriptions', async () => {
      const session = await stack.signIn('john', 'doe');
      await stack.graphql('query Accounts { viewer { accounts { id balance { current } } } }', {}, session, { 'cache-control': 'no-cache' });
      await stack.graphql('query Accounts { viewer { accounts { id balance { current } } } }', {}, session);
      // Another document over the same data: not in the answer cache, so it reads the data cache.
      await stack.graphql('query AccountIds { viewer { accounts { id } } }', {}, session);
      await stack.graphql('query Broken { viewer { nope } }', {}, session);
      await injectFault(stack, { match: 'GET /data/v1/cards', status: 503, times: 1 });
      await stack.graphql('query Cards { viewer { cards { id } } }', {}, session, { 'cache-control': 'no-cache' });

      const [payment] = paymentsIn(await fixtures(stack), 'authorized', 1);
      const live = connectWs(stack.gateway.url, stack.merchantKey).subscribe(REFUND_UPDATED, { paymentId: payment!.id });
      await waitFor(
        async () => (sample(await metrics(), 'bankgraph_active_subscriptions{field="refundUpdated"}') === 1 ? true : undefined),
        'the subscription to be counted',
      );

      const text = await metrics();
      expect(sample(text, 'bankgraph_http_requests_total{method="POST",route="/graphql",status="200"}')).toBeGreaterThanOrEqual(3);
      expect(sample(text, 'bankgraph_http_requests_total{method="POST",route="/graphql",status="400"}')).toBeGreaterThanOrEqual(1);
      expect(text).toMatch(/bankgraph_http_request_duration_seconds_bucket\{le="0\.1",method="POST",route="\/graphql"\} \d+/);
      expect(sample(text, 'bankgraph_graphql_operations_total{operation="Accounts",type="query",transport="http",outcome="success"}')).toBe(2);
      expect(sample(text, 'bankgraph_graphql_operations_total{operation="Broken",type="query",transport="http",outcome="error"}')).toBe(1);
      expect(sample(text, 'bankgraph_graphql_operation_duration_seconds_count{operation="Accounts",type="query",transport="http"}')).toBe(2);
      expect(sample(text, 'bankgraph_provider_requests_total{route="data.accounts",method="GET",status="200"}')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'bankgraph_provider_requests_total{route="data.cards",method="GET",status="503"}')).toBe(1);
      expect(sample(text, 'bankgraph_provider_retries_total{route="data.cards"}')).toBe(1);
      expect(sample(text, 'bankgraph_answer_cache_hits_total')).toBe(1);
      expect(sample(text, 'bankgraph_cache_lookups_total{resource="accounts",result="hit"}')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'bankgraph_cache_lookups_total{resource="accountBalance",result="miss"}')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'bankgraph_websocket_connections')).toBe(1);
      expect(text).toContain('# TYPE bankgraph_webhook_events_total counter');
      expect(text).toContain('process_cpu_user_seconds_total');

      live.unsubscribe();
      await waitFor(
        async () => (sample(await metrics(), 'bankgraph_active_subscriptions{field="refundUpdated"}') === 0 ? true : undefined),
        'the subscription to end',
      );
    });

    it('never puts a data webhook secret or a raw path in a label', async () => {
      await fetch(`${stack.gateway.url}/webhooks/data/secret-task-token-123`, { method: 'POST', body: '{}' });
      await fetch(`${stack.gateway.url}/no/such/path/secret-xyz`);
      const text = await metrics();
      expect(text).not.toContain('secret-task-token-123');
      expect(text).not.toContain('secret-xyz');
      expect(text).toContain('route="/webhooks/data/:token"');
      // The unsigned delivery above is counted as what it was: refused for its signature.
      expect(sample(text, 'bankgraph_webhook_events_total{source="data",outcome="refused_401"}')).toBeGreaterThanOrEqual(1);
      expect(text).toContain('route="other"');
    });
  });

  describe('error masking', () => {
    it('gives clients a code, a safe message and the request id; never the provider body or a stack', async () => {
      const stack = await startStack();
      try {
        const session = await stack.signIn('john', 'doe');
        for (const fault of [{ status: 500 }, { status: 400 }, { malformed: true }, { reset: true }]) {
          await injectFault(stack, { match: 'GET /data/v1/accounts', times: 3, ...fault });
          const response = await fetch(`${stack.gateway.url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${session}`, 'cache-control': 'no-cache' },
            body: JSON.stringify({ query: '{ viewer { accounts { id } } }' }),
          });
          const text = await response.text();
          const body = JSON.parse(text) as { errors: { message: string; extensions: Record<string, unknown> }[] };
          // The failing bank is named (its connection id): the user's other banks would still have answered.
          const { providerError, ...extensions } = body.errors[0]!.extensions;
          expect(extensions).toEqual({
            code: expect.stringMatching(/^UPSTREAM_(ERROR|UNAVAILABLE)$/),
            connectionId: expect.stringMatching(/^conn_/),
            requestId: response.headers.get('x-request-id'),
          });
          if (providerError !== undefined) expect(providerError).toMatch(/^[a-z_-]+$/);
          for (const leak of ['trace_id', 'truelayer', 'problem', 'stacktrace', 'exception', '/work/', 'node_modules', 'Bearer'])
            expect(text).not.toContain(leak);
          await stack.sandboxJson('DELETE', '/sandbox/faults');
        }
      } finally {
        await stack.close();
      }
    });
  });

  describe('graceful shutdown', () => {
    it('stops accepting, finishes in-flight requests, closes WebSockets with 1001 and reports not ready meanwhile', async () => {
      const stack = await startStack();
      try {
        const session = await stack.signIn('john', 'doe');
        // An open subscription: a pending refund's updates (it stays pending, its payment never settles here).
        const [payment] = paymentsIn(await fixtures(stack), 'authorized', 1);
        const refund = await stack.graphql(REFUND_PAYMENT, { input: { paymentId: payment!.id, amountInMinor: 100, reference: 'Shutdown' } }, stack.merchantKey);
        expect(refund.errors).toBeUndefined();
        const live = connectWs(stack.gateway.url, stack.merchantKey).subscribe(REFUND_UPDATED, { paymentId: payment!.id });
        await live.next();

        // A request in flight when the shutdown starts: the provider takes 600 ms to answer it.
        await injectFault(stack, { match: 'GET /data/v1/accounts', latencyMs: 600, times: 1 });
        const inFlight = stack.graphql('{ viewer { accounts { id } } }', {}, session, { 'cache-control': 'no-cache' });
        await new Promise((resolve) => setTimeout(resolve, 150));

        // A keep-alive connection opened before the shutdown, to ask again while it drains.
        const closing = stack.gateway.close();
        const during = await fetch(`${stack.gateway.url}/readyz`).then(
          (response) => response.status,
          () => 'refused',
        );
        expect([503, 'refused']).toContain(during);

        const answer = await inFlight;
        expect(answer.status).toBe(200);
        expect(answer.errors).toBeUndefined();

        const ended = await live.ended;
        expect((ended.error as { code?: number }).code).toBe(1001);
        await closing;
        await expect(fetch(`${stack.gateway.url}/healthz`)).rejects.toThrow();
      } finally {
        await stack.close();
      }
    });
  });

  describe('in production', () => {
    let stack: Stack;

    beforeAll(async () => {
      stack = await startStack({
        env: {
          NODE_ENV: 'production',
          PROVIDER: 'sandbox',
          IDENTITY: 'bank',
          LOG_LEVEL: 'silent',
          TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
          ALLOW_INSECURE_PUBLIC_URL: 'true',
          METRICS_TOKEN: 'metrics-token-0123456789',
        },
      });
    });

    afterAll(async () => {
      await stack?.close();
    });

    it('refuses introspection over HTTP and WebSocket', async () => {
      const http = await stack.graphql('{ __schema { types { name } } }');
      expect(http.status).toBe(400);
      expect(http.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(http.errors?.[0]?.message).toMatch(/introspection/i);
      const ws = await connectWs(stack.gateway.url).subscribe('{ __type(name: "Query") { name } }').next();
      expect(ws.errors?.[0]?.message).toMatch(/introspection/i);
    });

    it('gives no field suggestions, over HTTP and WebSocket', async () => {
      const http = await stack.graphql('{ viewer { acounts { id } } }');
      expect(http.errors?.[0]?.message).toBe('Cannot query field "acounts" on type "Viewer".');
      const ws = await connectWs(stack.gateway.url).subscribe('{ viewer { acounts { id } } }').next();
      expect(ws.errors?.[0]?.message).toBe('Cannot query field "acounts" on type "Viewer".');
    });
  });

  describe('outside production', () => {
    it('suggests fields, which helps developers', async () => {
      const stack = await startStack();
      try {
        const http = await stack.graphql('{ viewer { acounts { id } } }');
        expect(http.errors?.[0]?.message).toMatch(/Did you mean "accounts"/);
      } finally {
        await stack.close();
      }
    });
  });
});
