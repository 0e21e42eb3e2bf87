import type { IncomingHttpHeaders } from 'node:http';
import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import type { BasicTracerProvider, Sampler, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { TelemetryConfig } from '../config/config';

export { SpanKind, SpanStatusCode, trace, type Context, type Span };

const HEADER_GETTER: TextMapGetter<IncomingHttpHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

let contextManagerInstalled = false;

/**
 * Tracing for one gateway: its own tracer provider (not the global one, so gateways in one process, as in the
 * tests, export to their own exporters), W3C trace context in and out. Off (`enabled` false) when no exporter is
 * configured: then the SDK is not even loaded (nor its memory paid for), no SDK object exists and every
 * helper below runs its function directly.
 */
export class Telemetry {
  readonly enabled: boolean;
  readonly tracer: Tracer | undefined;

  private constructor(private readonly sdk?: { provider: BasicTracerProvider; tracer: Tracer; propagator: TextMapPropagator }) {
    this.enabled = sdk !== undefined;
    this.tracer = sdk?.tracer;
  }

  static readonly off = new Telemetry();

  /** `exporter`: a test's in-memory exporter, used whatever the configuration says, with spans exported as they end. */
  static async start(config: TelemetryConfig, exporter?: SpanExporter): Promise<Telemetry> {
    if (!exporter && config.exporter === undefined) return Telemetry.off;
    const [base, { resourceFromAttributes }, { W3CTraceContextPropagator }, { AsyncLocalStorageContextManager }] = await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/core'),
      import('@opentelemetry/context-async-hooks'),
    ]);
    const chosen = exporter ?? (await exporterFor(config, base));
    if (!contextManagerInstalled) {
      // Parent/child across awaits needs AsyncLocalStorage; one manager per process serves every gateway in it.
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      contextManagerInstalled = true;
    }
    const provider = new base.BasicTracerProvider({
      resource: resourceFromAttributes({ ...config.resourceAttributes, 'service.name': config.serviceName }),
      sampler: samplerFor(config, base),
      spanProcessors: [exporter ? new base.SimpleSpanProcessor(chosen) : new base.BatchSpanProcessor(chosen)],
    });
    return new Telemetry({ provider, tracer: provider.getTracer('bankgraph'), propagator: new W3CTraceContextPropagator() });
  }

  /**
   * The context an incoming request's `traceparent` put it in; the root context without one. The caller's
   * `tracestate` is dropped: it is the caller's vendors' data, and every provider call would pass it on.
   */
  extract(headers: IncomingHttpHeaders): Context {
    if (!this.sdk) return ROOT_CONTEXT;
    const remote = trace.getSpanContext(this.sdk.propagator.extract(ROOT_CONTEXT, headers, HEADER_GETTER));
    if (!remote) return ROOT_CONTEXT;
    const { traceState: _dropped, ...parent } = remote;
    return trace.setSpanContext(ROOT_CONTEXT, parent);
  }

  /** Adds `traceparent` (and `tracestate`) for the span active in `ctx` to outgoing headers. */
  inject(ctx: Context, headers: Record<string, string>): void {
    this.sdk?.propagator.inject(ctx, headers, { set: (carrier, key, value) => (carrier[key] = value) });
  }

  /**
   * Runs `fn` as the active span `name`, a child of the active span (or of `parent`); the span ends when `fn`
   * settles and records a thrown error. Disabled: `fn(undefined)`.
   */
  async span<T>(name: string, options: { kind?: SpanKind; attributes?: Attributes; parent?: Context }, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
    if (!this.tracer) return fn(undefined);
    const parent = options.parent ?? context.active();
    const span = this.tracer.startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, parent);
    try {
      return await context.with(trace.setSpan(parent, span), fn, undefined, span);
    } catch (error) {
      recordError(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  /** Flushes spans not yet exported; a gateway calls it when it closes. */
  async shutdown(): Promise<void> {
    await this.sdk?.provider.shutdown();
  }
}

/**
 * A background job's run (the payout watcher's reads, the reconciler's passes) as the root span `job <name>` of a
 * trace of its own: it serves no request, and a trace per run keeps each run readable on its own.
 */
export function traceJob<T>(
  telemetry: Telemetry | undefined,
  name: string,
  fn: (span: Span | undefined) => Promise<T>,
  attributes: Attributes = {},
): Promise<T> {
  if (!telemetry?.enabled) return fn(undefined);
  return telemetry.span(`job ${name}`, { parent: ROOT_CONTEXT, attributes: { 'bankgraph.job': name, ...attributes } }, fn);
}

export function recordError(span: Span, error: unknown): void {
  const code = (error as { extensions?: { code?: unknown } } | undefined)?.extensions?.code;
  span.setStatus({ code: SpanStatusCode.ERROR, message: typeof code === 'string' ? code : undefined });
  // The exception's type only: messages can quote provider bodies, and spans leave the gateway.
  span.setAttribute('error.type', typeof code === 'string' ? code : ((error as Error | undefined)?.constructor?.name ?? 'Error'));
}

type TraceSdk = typeof import('@opentelemetry/sdk-trace-base');

async function exporterFor(config: TelemetryConfig, sdk: TraceSdk): Promise<SpanExporter> {
  if (config.exporter === 'console') return new sdk.ConsoleSpanExporter();
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  return new OTLPTraceExporter({ url: config.tracesUrl, headers: config.headers });
}

/**
 * The parent-based samplers follow a parent inside this process; a remote parent (an inbound `traceparent`) is
 * followed only with OTEL_TRUST_INBOUND_SAMPLING=true. Otherwise anyone could have every request traced, whatever
 * the ratio, by sending the sampled flag: the trace is still continued, but the root sampler decides.
 */
function samplerFor(config: TelemetryConfig, sdk: TraceSdk): Sampler {
  const ratio = new sdk.TraceIdRatioBasedSampler(config.samplerRatio);
  const parentBased = (root: Sampler): Sampler =>
    new sdk.ParentBasedSampler(config.trustInboundSampling ? { root } : { root, remoteParentSampled: root, remoteParentNotSampled: root });
  switch (config.sampler) {
    case 'always_on':
      return new sdk.AlwaysOnSampler();
    case 'always_off':
      return new sdk.AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return parentBased(new sdk.AlwaysOffSampler());
    case 'parentbased_traceidratio':
      return parentBased(ratio);
    default:
      return parentBased(new sdk.AlwaysOnSampler());
  }
}
