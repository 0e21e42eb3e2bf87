import 'reflect-metadata';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { ROOT_CONTEXT as ROOT_CONTEXT_FOR_SAMPLER } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { createLogger } from '../../src/platform/observability/logger';
import { streamDeferred, type DeferTransport } from '../helpers/deferred-client';
import { injectFault, fixtures, user } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';
import { ancestorsOf, expectColdViewerTrace, fromReadable, SPAN_CLOCK_SLACK_MS, type SeenSpan } from '../helpers/trace-shape';
import { waitFor } from '../helpers/wait-for';
import { connectWs, disposeWsClients } from '../helpers/ws-client';
import { post, signedDelivery, startTestJwks, type TestJwks } from '../helpers/webhook-signer';

/*
 * Traces of a nested query, read back from an in-memory exporter and, as a collector would get them, from a real
 * OTLP/HTTP receiver this test starts. The sandbox answers each call after 60 ms, so calls that run in parallel
 * overlap by a margin a loaded machine does not erase.
 */

const VIEWER = `query ViewerGraph { viewer { accounts { id: accountId balance { current } transactions(first: 3) { totalCount } } cards { id: cardId balance { current } } } }`;
const ENV = { SANDBOX_LATENCY_MS: '60' };

describe('OpenTelemetry traces (in-memory exporter)', () => {
  let stack: Stack;
  const exporter = new InMemorySpanExporter();
  const logLines: Record<string, unknown>[] = [];
  const logSink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });

  beforeAll(async () => {
    stack = await startStack({ env: ENV, gateway: { spanExporter: exporter, logger: createLogger('info', logSink) } });
  });
  afterAll(async () => stack?.close());
  beforeEach(() => exporter.reset());

  const spans = (): SeenSpan[] => exporter.getFinishedSpans().map(fromReadable);

  /** Signs in and waits for the sign-in's own traces to end (its bank-connected event is delivered a moment later). */
  async function signedIn(username = 'john'): Promise<string> {
    const token = await stack.signIn(username);
    await waitFor(() => (spans().some((span) => span.name === 'live deliver identity') ? true : undefined), "the sign-in's identity event");
    exporter.reset();
    return token;
  }

  it('shows a cold nested query as one trace: provider calls under the operation, two in sequence, the rest in parallel', async () => {
    const token = await signedIn();
    const answer = await stack.graphql<{ viewer: { accounts: unknown[]; cards: unknown[] } }>(VIEWER, {}, token, { 'cache-control': 'no-cache' });
    expect(answer.errors).toBeUndefined();
    const { accounts, cards } = answer.data!.viewer;
    await waitFor(() => (spans().some((span) => span.name === 'POST /graphql') ? true : undefined), 'the request span');
    const seen = spans();
    expectColdViewerTrace(seen, accounts.length, cards.length);
    const operation = seen.find((span) => span.name === 'query ViewerGraph')!;
    expect(operation.attributes).toMatchObject({ 'graphql.operation.type': 'query', 'graphql.operation.name': 'ViewerGraph', 'bankgraph.outcome': 'success' });
    expect(seen.find((span) => span.spanId === operation.parentId)?.name).toBe('POST /graphql');
    // Each provider call hangs off the resolver path that needed it.
    const balance = seen.find((span) => span.attributes['bankgraph.provider.route'] === 'data.accountBalance')!;
    expect(seen.find((span) => span.spanId === balance.parentId)?.attributes).toMatchObject({
      'graphql.field.coordinate': 'Account.balance',
      'graphql.field.path': expect.stringMatching(/^viewer\.accounts\.\d+\.balance$/),
    });
  });

  it("continues the caller's trace from traceparent, and logs the trace id next to the request id", async () => {
    const token = await signedIn();
    // A sign-in drops the answers kept for its user (its bank connection is new): keep this one again first.
    await stack.graphql(VIEWER, {}, token);
    await waitFor(() => (spans().some((span) => span.name === 'POST /graphql') ? true : undefined), 'the warming request span');
    exporter.reset();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const answer = await stack.graphql(VIEWER, {}, token, { traceparent: `00-${traceId}-${callerSpan}-01`, 'x-request-id': 'trace-test-request-1' });
    expect(answer.errors).toBeUndefined();
    await waitFor(() => (spans().some((span) => span.name === 'POST /graphql') ? true : undefined), 'the request span');
    const seen = spans();
    expect(new Set(seen.map((span) => span.traceId))).toEqual(new Set([traceId]));
    expect(seen.find((span) => span.name === 'POST /graphql')?.parentId).toBe(callerSpan);
    // The same body again: a kept answer, served without executing; the request span says which operation it was.
    expect(seen.find((span) => span.name === 'POST /graphql')?.attributes).toMatchObject({
      'graphql.operation.name': 'ViewerGraph',
      'bankgraph.outcome': 'success',
    });
    // The client's X-Request-Id is logged beside the gateway's own id for the request, never as it.
    const line = logLines.find((entry) => entry.msg === 'graphql operation' && entry.clientRequestId === 'trace-test-request-1');
    expect(line).toMatchObject({ traceId, operationName: 'ViewerGraph', requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });

  it('records outcome and error codes, never variable values', async () => {
    const token = await stack.signIn();
    exporter.reset();
    const marker = 'secret-marker-0042';
    const answer = await stack.graphql('query One($from: Date) { viewer { accounts { transactions(from: $from) { totalCount } } } }', { from: marker }, token);
    const code = answer.errors?.[0]?.extensions?.code;
    expect(code).toBeDefined();
    await waitFor(() => (spans().some((span) => span.name === 'POST /graphql') ? true : undefined), 'the request span');
    const seen = spans();
    expect(JSON.stringify(seen)).not.toContain(marker);
    expect(seen.find((span) => span.name === 'query One')?.attributes).toMatchObject({ 'bankgraph.error_codes': [code] });
  });

  it('traces a query over WebSocket as an operation of its own', async () => {
    const token = await stack.signIn();
    exporter.reset();
    const ws = connectWs(stack.gateway.url, token);
    try {
      const result = await ws.subscribe('query Accounts { viewer { accounts { id: accountId } } }').next();
      expect(result.errors).toBeUndefined();
    } finally {
      await ws.dispose();
      await disposeWsClients();
    }
    const operation = await waitFor(() => spans().find((span) => span.name === 'query Accounts'), 'the WebSocket operation span');
    expect(operation.attributes).toMatchObject({ 'bankgraph.transport': 'ws', 'bankgraph.outcome': 'success' });
  });
  // Each transport reads another user's balances: the provider's answers are kept a few seconds per user.
  it.each([
    ['http', 'jane', 'http'],
    ['ws', 'lee', 'ws'],
    ['sse', 'sam', 'sse'],
  ] as [DeferTransport, string, string][])(
    'traces a deferred operation over %s as one span until its last payload, an event per payload',
    async (transport, username, attribute) => {
      const token = await signedIn(username);
      // Slow balances end well after the first payload, so an operation span ending there could not pass for one
      // ending with them.
      await injectFault(stack, { match: 'GET /data/v1/accounts/*/balance', latencyMs: 30 });
      const query = 'query DeferredBalances { viewer { id ... @defer(label: "balances") { accounts { balance { current } } } } }';
      const live = streamDeferred(transport, stack.gateway.url, { query }, token);
      try {
        expect(await live.ended).toEqual({ completed: true });
      } finally {
        await stack.sandboxJson('DELETE', '/sandbox/faults');
      }
      expect(live.payloads.at(-1)!.hasNext).toBe(false);
      const finished = await waitFor(() => exporter.getFinishedSpans().find((span) => span.name === 'query DeferredBalances'), 'the operation span');
      const operation = fromReadable(finished);
      expect(operation.attributes).toMatchObject({ 'bankgraph.transport': attribute, 'bankgraph.outcome': 'success', 'graphql.operation.type': 'query' });
      expect(finished.events.map((event) => [event.name, event.attributes?.['bankgraph.payload.has_next']])).toEqual(
        live.payloads.map((payload) => ['graphql.payload', payload.hasNext]),
      );
      // The deferred balances' provider calls are the operation's, and it ended after they did, not at its first payload.
      const seen = spans();
      expect(seen.filter((span) => span.name === 'query DeferredBalances')).toHaveLength(1);
      // Over HTTP a child of the request's span; a WebSocket's operations start traces of their own.
      const parent = { http: 'POST /graphql', ws: undefined, sse: expect.stringMatching(/^POST /) }[transport];
      expect(seen.find((span) => span.spanId === operation.parentId)?.name).toEqual(parent);
      const balances = seen.filter((span) => span.attributes['bankgraph.provider.route'] === 'data.accountBalance');
      expect(balances.length).toBeGreaterThan(0);
      for (const call of balances) {
        expect(ancestorsOf(call, seen)).toContainEqual(operation);
        expect(operation.endMs).toBeGreaterThanOrEqual(call.endMs - SPAN_CLOCK_SLACK_MS);
      }
    },
  );

  it('ends a deferred operation span whose client went away, saying so', async () => {
    const token = await signedIn('jane');
    const accountId = user(await fixtures(stack), 'jane').accounts[1]!.account.account_id;
    await injectFault(stack, { match: `GET /data/v1/accounts/${accountId}/balance`, latencyMs: 5_000 });
    try {
      const query = 'query LeftEarly($id: ID!) { viewer { id ... @defer { account(id: $id) { balance { current } } } } }';
      const live = streamDeferred('ws', stack.gateway.url, { query, variables: { id: accountId } }, token);
      expect((await live.next()).hasNext).toBe(true);
      live.close();
      const finished = await waitFor(() => exporter.getFinishedSpans().find((span) => span.name === 'query LeftEarly'), 'the operation span');
      expect(finished.attributes).toMatchObject({ 'bankgraph.transport': 'ws', 'bankgraph.outcome': 'aborted' });
      expect(finished.events).toHaveLength(1);
    } finally {
      await stack.sandboxJson('DELETE', '/sandbox/faults');
    }
  });
});

describe("a caller's trace context: continued, never deciding sampling unless trusted, its tracestate dropped", () => {
  // With a ratio of one half, the ratio sampler keeps BY_RATIO's trace and drops NOT_BY_RATIO's (checked below
  // against the SDK's own sampler), so a request shows who decided.
  const BY_RATIO = '00000000000000000000000000000001';
  const NOT_BY_RATIO = 'ffffffff00000000000000000000000f';
  const ENV_RATIO = { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' };
  const stacks: Stack[] = [];
  afterAll(async () => {
    for (const stack of stacks) await stack.close();
  });

  async function stackWith(env: Record<string, string>): Promise<{ stack: Stack; exporter: InMemorySpanExporter }> {
    const exporter = new InMemorySpanExporter();
    const stack = await startStack({ env: { ...ENV_RATIO, ...env }, gateway: { spanExporter: exporter } });
    stacks.push(stack);
    return { stack, exporter };
  }

  const traceparent = (traceId: string, sampled: boolean): string => `00-${traceId}-00f067aa0ba902b7-${sampled ? '01' : '00'}`;

  it('lets the ratio decide whatever the sampled flag says, and passes on no tracestate', async () => {
    const { TraceIdRatioBasedSampler, SamplingDecision } = await import('@opentelemetry/sdk-trace-base');
    const ratio = new TraceIdRatioBasedSampler(0.5);
    const decide = (traceId: string): unknown => ratio.shouldSample(ROOT_CONTEXT_FOR_SAMPLER, traceId).decision;
    expect(decide(BY_RATIO)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide(NOT_BY_RATIO)).toBe(SamplingDecision.NOT_RECORD);

    const { stack, exporter } = await stackWith({});
    // Sampled by the caller, not by the ratio: not traced.
    expect((await stack.graphql('{ __typename }', {}, undefined, { traceparent: traceparent(NOT_BY_RATIO, true) })).errors).toBeUndefined();
    // Not sampled by the caller, sampled by the ratio: traced, in the caller's trace, without the caller's tracestate.
    const answer = await stack.graphql('{ __typename }', {}, undefined, { traceparent: traceparent(BY_RATIO, false), tracestate: 'vendor=caller-data-0042' });
    expect(answer.errors).toBeUndefined();
    await waitFor(() => (exporter.getFinishedSpans().some((span) => span.name === 'POST /graphql') ? true : undefined), 'the request span');
    const finished = exporter.getFinishedSpans();
    expect(new Set(finished.map((span) => span.spanContext().traceId))).toEqual(new Set([BY_RATIO]));
    expect(finished.filter((span) => span.spanContext().traceState !== undefined).map((span) => span.name)).toEqual([]);
  });

  it('follows the sampled flag with OTEL_TRUST_INBOUND_SAMPLING=true', async () => {
    const { stack, exporter } = await stackWith({ OTEL_TRUST_INBOUND_SAMPLING: 'true' });
    expect((await stack.graphql('{ __typename }', {}, undefined, { traceparent: traceparent(NOT_BY_RATIO, true) })).errors).toBeUndefined();
    const request = await waitFor(() => exporter.getFinishedSpans().find((span) => span.name === 'POST /graphql'), 'the request span');
    expect(request.spanContext().traceId).toBe(NOT_BY_RATIO);
  });
});

describe('OpenTelemetry traces of a webhook: received -> stored -> published -> delivered', () => {
  let stack: Stack;
  let jwks: TestJwks;
  const exporter = new InMemorySpanExporter();

  beforeAll(async () => {
    jwks = await startTestJwks();
    stack = await startStack({
      env: { SANDBOX_TIME_SCALE: '0.001' },
      provider: (provider) => ({ ...provider, webhookJwksUrls: [...provider.webhookJwksUrls, jwks.url] }),
      gateway: { spanExporter: exporter },
    });
  });
  afterAll(async () => {
    await disposeWsClients();
    await stack?.close();
    await jwks?.close();
  });

  it("follows a data notification from the request to the subscriber it reached, in the provider's trace", async () => {
    const session = await stack.signIn();
    const started = await stack.graphql<{ startDataTask: { id: string } }>(
      'mutation Start($input: StartDataTaskInput!) { startDataTask(input: $input) { id: taskId } }',
      { input: { resource: 'ACCOUNTS' } },
      session,
    );
    const taskId = started.data!.startDataTask.id;
    const { requests } = await stack.sandboxJson<{ requests: { path: string; query: Record<string, string> }[] }>('GET', '/sandbox/requests');
    const webhookUrl = requests
      .filter((request) => request.query.webhook_uri)
      .map((request) => request.query.webhook_uri!)
      .at(-1)!;
    const subscriber = connectWs(stack.gateway.url, session).subscribe<{ dataTaskUpdated: { status: string } }>(
      'subscription Updated($id: ID!) { dataTaskUpdated(id: $id) { status } }',
      { id: taskId },
    );
    expect((await subscriber.next()).data!.dataTaskUpdated.status).toBe('QUEUED');

    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const body = JSON.stringify({
      request_timestamp: new Date().toISOString(),
      credentials_id: 'test',
      task_id: taskId,
      status: 'succeeded',
      results_uri: `${stack.sandbox.url}/data/v1/results/${taskId}`,
    });
    const delivery = signedDelivery(webhookUrl, body, { jku: jwks.url, kid: jwks.kid, privateKey: jwks.privateKey });
    expect(await post({ ...delivery, headers: { ...delivery.headers, traceparent: `00-${traceId}-b7ad6b7169203331-01` } })).toEqual({
      status: 200,
      body: { status: 'accepted' },
    });
    expect((await subscriber.next()).data!.dataTaskUpdated.status).toBe('SUCCEEDED');

    const inTrace = (): SeenSpan[] =>
      exporter
        .getFinishedSpans()
        .map(fromReadable)
        .filter((span) => span.traceId === traceId);
    const deliver = await waitFor(() => inTrace().find((span) => span.name === 'live deliver data-task'), 'the delivery span');
    const seen = inTrace();
    const named = (name: string): SeenSpan => {
      const span = seen.find((each) => each.name === name);
      if (!span) throw new Error(`no span ${name} among ${seen.map((each) => each.name).join(', ')}`);
      return span;
    };
    const request = named('POST /webhooks/data/:token');
    const received = named('webhook received');
    expect(received.parentId).toBe(request.spanId);
    expect(received.attributes).toMatchObject({ 'bankgraph.webhook.source': 'data', 'bankgraph.webhook.outcome': 'accepted' });
    expect(named('webhook stored').parentId).toBe(received.spanId);
    const published = named('webhook published');
    expect(published.parentId).toBe(received.spanId);
    const publish = named('live publish data-task');
    expect(ancestorsOf(publish, seen)).toContain(published);
    expect(deliver.parentId).toBe(publish.spanId);
    expect(deliver.attributes['bankgraph.live.subscribers']).toBeGreaterThanOrEqual(1);
    // The task's webhook secret is the last segment of its URL: no span may carry it.
    expect(JSON.stringify(seen)).not.toContain(new URL(webhookUrl).pathname.split('/').at(-1));
  });
});

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpExport {
  resourceSpans: {
    resource: { attributes: { key: string; value: OtlpValue }[] };
    scopeSpans: {
      spans: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        startTimeUnixNano: string;
        endTimeUnixNano: string;
        attributes?: { key: string; value: OtlpValue }[];
      }[];
    }[];
  }[];
}

function valueOf(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  return value.arrayValue?.values?.map(valueOf);
}

/** OTLP/JSON ids are hex here; protobuf-style base64 ids would be 24 or 12 characters, and are turned into hex too. */
function hexId(id: string | undefined): string | undefined {
  if (!id) return undefined;
  return /^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
}

describe('OpenTelemetry traces (OTLP/HTTP to a receiver started by the test)', () => {
  let receiver: Server;
  const exports: { path: string; contentType: string | undefined; body: OtlpExport }[] = [];
  let stack: Stack;

  beforeAll(async () => {
    receiver = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        exports.push({ path: req.url ?? '', contentType: req.headers['content-type'], body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    stack = await startStack({ env: { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: 'bankgraph-otlp-test' } });
  });
  afterAll(async () => {
    await stack?.close();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it("exports the cold nested query's trace over OTLP/HTTP with the service name", async () => {
    const token = await stack.signIn();
    const answer = await stack.graphql<{ viewer: { accounts: unknown[]; cards: unknown[] } }>(VIEWER, {}, token, { 'cache-control': 'no-cache' });
    expect(answer.errors).toBeUndefined();
    // Closing flushes the batch processor, as a shutdown does in production.
    await stack.gateway.close();
    expect(exports.length).toBeGreaterThan(0);
    expect(exports[0]).toMatchObject({ path: '/v1/traces', contentType: expect.stringMatching(/^application\/json/) });
    const decoded: SeenSpan[] = [];
    for (const { body } of exports) {
      for (const resourceSpans of body.resourceSpans) {
        const serviceName = resourceSpans.resource.attributes.find((attribute) => attribute.key === 'service.name');
        expect(serviceName && valueOf(serviceName.value)).toBe('bankgraph-otlp-test');
        for (const scope of resourceSpans.scopeSpans) {
          for (const span of scope.spans) {
            decoded.push({
              traceId: hexId(span.traceId)!,
              spanId: hexId(span.spanId)!,
              parentId: hexId(span.parentSpanId),
              name: span.name,
              startMs: Number(BigInt(span.startTimeUnixNano) / 1000n) / 1000,
              endMs: Number(BigInt(span.endTimeUnixNano) / 1000n) / 1000,
              attributes: Object.fromEntries((span.attributes ?? []).map((attribute) => [attribute.key, valueOf(attribute.value)])),
            });
          }
        }
      }
    }
    const operation = decoded.find((span) => span.name === 'query ViewerGraph');
    expect(operation).toBeDefined();
    expectColdViewerTrace(
      decoded.filter((span) => span.traceId === operation!.traceId),
      answer.data!.viewer.accounts.length,
      answer.data!.viewer.cards.length,
    );
  });
});
