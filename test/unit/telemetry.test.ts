import { context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { loadConfig } from '../../src/platform/config/config';
import { Telemetry, traceJob } from '../../src/platform/observability/telemetry';
import type { PayoutClient } from '../../src/platform/provider/payout.client';
import { createLogger } from '../../src/platform/observability/logger';
import { MemoryEventBus } from '../../src/platform/live/event-bus';
import { InProcessLeases } from '../../src/platform/scheduler/lease';
import { payoutWatchers } from '../helpers/payout-watch';
import { TracedEventBus } from '../../src/platform/live/traced-event-bus';
import { waitFor } from '../helpers/wait-for';
import { networkError, mockProvider, problem, ORIGIN } from '../helpers/mock-provider';

const telemetryConfig = loadConfig({}).observability.telemetry;

async function traced(): Promise<{ telemetry: Telemetry; exporter: InMemorySpanExporter }> {
  const exporter = new InMemorySpanExporter();
  return { telemetry: await Telemetry.start(telemetryConfig, exporter), exporter };
}

let provider: ReturnType<typeof mockProvider> | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

describe("a caller's trace context", () => {
  it("continues the caller's trace in provider calls without the caller's tracestate", async () => {
    const { telemetry } = await traced();
    const parent = telemetry.extract({
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      tracestate: 'vendor=caller-data-0042,other=x',
    });
    const outgoing: Record<string, string> = {};
    await telemetry.span('request', { parent }, async () => telemetry.inject(context.active(), outgoing));
    expect(outgoing.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
    expect(outgoing.tracestate).toBeUndefined();
    await telemetry.shutdown();
  });
});

describe('provider call spans', () => {
  it('is one client span per send, with the attempt, the retry reason and the status, each sending its own traceparent', async () => {
    const { telemetry, exporter } = await traced();
    provider = mockProvider({ telemetry });
    provider.on('GET', '/thing', { status: 503, body: problem(503, 'service-unavailable') }, networkError('ECONNRESET'), { status: 200, body: { ok: 1 } });
    await telemetry.span('operation', {}, () => provider!.http.send({ route: 'test.get', method: 'GET', url: `${ORIGIN}/thing` }));

    const spans = exporter.getFinishedSpans();
    const operation = spans.find((span) => span.name === 'operation')!;
    const sends = spans.filter((span) => span.name === 'GET test.get');
    expect(sends.map((span) => span.attributes)).toEqual([
      expect.objectContaining({ 'bankgraph.provider.attempt': 1, 'http.response.status_code': 503, 'error.type': '503' }),
      expect.objectContaining({
        'bankgraph.provider.attempt': 2,
        'http.request.resend_count': 1,
        'bankgraph.provider.retry_reason': 'http_503',
        'error.type': 'ECONNRESET',
      }),
      expect.objectContaining({
        'bankgraph.provider.attempt': 3,
        'http.request.resend_count': 2,
        'bankgraph.provider.retry_reason': 'ECONNRESET',
        'http.response.status_code': 200,
      }),
    ]);
    for (const span of sends) expect(span.parentSpanContext?.spanId).toBe(operation.spanContext().spanId);
    // The provider got the trace context of the send it was answering (the connection error's send left no request).
    const sent = provider.requests.map((request) => request.headers.traceparent);
    const expected = [sends[0]!, sends[2]!].map((span: ReadableSpan) => `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
    expect(sent).toEqual(expected);
  });

  it('sends no traceparent and makes no span with tracing off', async () => {
    provider = mockProvider({ telemetry: await Telemetry.start(telemetryConfig) });
    provider.on('GET', '/thing', { status: 200, body: {} });
    await provider.http.send({ route: 'test.get', method: 'GET', url: `${ORIGIN}/thing` });
    expect(provider.requests[0]!.headers.traceparent).toBeUndefined();
  });
});

describe('traceJob', () => {
  it('runs a job as the root of a trace of its own, even when started inside a request', async () => {
    const { telemetry, exporter } = await traced();
    await telemetry.span('request', {}, () => traceJob(telemetry, 'reconcile', async () => trace.getActiveSpan()?.setAttribute('inside', true)));
    const job = exporter.getFinishedSpans().find((span) => span.name === 'job reconcile')!;
    const request = exporter.getFinishedSpans().find((span) => span.name === 'request')!;
    expect(job.parentSpanContext).toBeUndefined();
    expect(job.spanContext().traceId).not.toBe(request.spanContext().traceId);
    expect(job.attributes).toMatchObject({ 'bankgraph.job': 'reconcile', inside: true });
  });

  it('records a failed run with the error type, not its message, and rethrows', async () => {
    const { telemetry, exporter } = await traced();
    await expect(traceJob(telemetry, 'reconcile', async () => Promise.reject(new RangeError('IBAN GB33BUKB20201555555555 failed')))).rejects.toThrow(
      RangeError,
    );
    const [job] = exporter.getFinishedSpans();
    expect(job!.status.code).toBe(2);
    expect(job!.attributes['error.type']).toBe('RangeError');
    expect(JSON.stringify({ attributes: job!.attributes, events: job!.events, status: job!.status })).not.toContain('GB33');
  });

  it('just runs the job with tracing off', async () => {
    const telemetry = await Telemetry.start(telemetryConfig);
    expect(telemetry.enabled).toBe(false);
    await expect(traceJob(telemetry, 'reconcile', async (span) => ({ span, active: trace.getSpan(context.active()) }))).resolves.toEqual({
      span: undefined,
      active: undefined,
    });
  });
});

describe('the payout watcher as a traced job', () => {
  it('makes each read the root span `job payout-watch` of its own trace, with the provider call and the publish under it', async () => {
    const { telemetry, exporter } = await traced();
    provider = mockProvider({ telemetry });
    const id = '8d7c1b52-3f7e-4a6b-9c1d-2e3f4a5b6c7d';
    provider.on('GET', `/withdrawals/${id}`, { status: 200, body: { transaction_id: id, status: 'settled' } });
    const payouts = {
      getWithdrawal: async () =>
        (await provider!.http.send<{ status: string }>({ route: 'payouts.getWithdrawal', method: 'GET', url: `${ORIGIN}/withdrawals/${id}` })).body,
    } as unknown as PayoutClient;
    const bus = new TracedEventBus(new MemoryEventBus(createLogger('silent')), telemetry);
    const watchers = payoutWatchers(
      payouts,
      { bus, leases: new InProcessLeases(), logger: createLogger('silent'), telemetry },
      { initialDelayMs: 1, maxDelayMs: 10, factor: 2, leaseTtlMs: 100 },
    );
    try {
      const release = watchers.watch(id);
      const job = await waitFor(() => exporter.getFinishedSpans().find((span) => span.name === 'job payout-watch'), 'the watcher job span');
      release();
      const spans = exporter.getFinishedSpans();
      expect(job.parentSpanContext).toBeUndefined();
      const inJob = spans.filter((span) => span.spanContext().traceId === job.spanContext().traceId).map((span) => span.name);
      expect(inJob).toEqual(expect.arrayContaining(['GET payouts.getWithdrawal', 'live publish payout', 'job payout-watch']));
    } finally {
      await watchers.close();
    }
  });
});
