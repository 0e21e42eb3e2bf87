import { context, trace } from '@opentelemetry/api';
import { recordError, SpanKind, SpanStatusCode, type Span, type Telemetry } from './telemetry';

/** Spans made by traceOperation and traceOperationResults: only these are renamed after their operation. */
const operationSpans = new WeakSet<Span>();

/** What carried the operation: plain HTTP and multipart HTTP are both `http`. */
export type OperationTransport = 'http' | 'ws' | 'sse' | 'mcp';

/**
 * Runs an operation's execution inside the span `graphql.operation`, active, so resolver and provider spans are
 * its descendants; annotateOperation names it once the operation is known.
 */
export function traceOperation<T>(
  telemetry: Telemetry,
  transport: OperationTransport,
  requestId: string | undefined,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!telemetry.enabled) return fn(undefined);
  return telemetry.span('graphql.operation', { attributes: operationAttributes(transport, requestId) }, (span) => {
    if (span) operationSpans.add(span);
    return fn(span);
  });
}

function operationAttributes(transport: OperationTransport, requestId: string | undefined): Record<string, string> {
  return { 'bankgraph.transport': transport, ...(requestId ? { 'bankgraph.request_id': requestId } : {}) };
}

export interface OperationSummary {
  operationName: string | undefined;
  operationType: string | undefined;
  outcome: string;
  errorCodes?: string[];
}

/**
 * Names the operation span `<type> <name>` (OpenTelemetry's GraphQL convention) and records how it ended: outcome
 * and error codes, never variables or the document's arguments, which can hold IBANs and names.
 * Without `span`, the active one: for HTTP the operation span, or, for a request answered without executing (a
 * refusal, a kept answer), the request span, which gets the attributes but keeps its name. Nothing with tracing off.
 */
export function annotateOperation(summary: OperationSummary, span: Span | undefined = trace.getActiveSpan()): void {
  if (!span) return;
  if (summary.operationType && operationSpans.has(span)) span.updateName(`${summary.operationType}${summary.operationName ? ` ${summary.operationName}` : ''}`);
  if (summary.operationType) span.setAttribute('graphql.operation.type', summary.operationType);
  if (summary.operationName) span.setAttribute('graphql.operation.name', summary.operationName);
  span.setAttribute('bankgraph.outcome', summary.outcome);
  if (summary.errorCodes && summary.errorCodes.length > 0) span.setAttribute('bankgraph.error_codes', summary.errorCodes);
  if (summary.outcome === 'error' || summary.outcome === 'refused') span.setStatus({ code: SpanStatusCode.ERROR, message: summary.errorCodes?.join(',') });
}

/** One result or payload as the operation span reads it: its data, its errors and its incremental parts' errors. */
export interface TracedResult<E> {
  data?: unknown;
  errors?: readonly E[];
  hasNext?: boolean;
  incremental?: readonly { errors?: readonly E[] }[];
}

/** How an operation ended, from its data and every error it answered. */
export type OutcomeOf<E> = (data: unknown, errors: readonly E[]) => Pick<OperationSummary, 'outcome' | 'errorCodes'>;

/**
 * traceOperation for an operation whose answer may be its payloads one by one (@defer, @stream): one span for the
 * whole operation, not only until its first payload. It stays open until the last payload is given or the client
 * stops reading, with an event `graphql.payload` per payload, and is annotated as it ends: the operation's type and
 * name, the outcome of all its payloads' errors, `aborted` when the client stopped first. The payloads' return
 * reaches the operation at once, so a client going away still cancels what it no longer needs.
 */
export async function traceOperationResults<E, R extends TracedResult<E>, P extends TracedResult<E>>(
  telemetry: Telemetry,
  transport: OperationTransport,
  requestId: string | undefined,
  operation: Pick<OperationSummary, 'operationName' | 'operationType'>,
  outcomeOf: OutcomeOf<E>,
  fn: () => Promise<R | AsyncGenerator<P>>,
): Promise<R | AsyncGenerator<P>> {
  if (!telemetry.enabled || !telemetry.tracer) return fn();
  const parent = context.active();
  const span = telemetry.tracer.startSpan('graphql.operation', { kind: SpanKind.INTERNAL, attributes: operationAttributes(transport, requestId) }, parent);
  operationSpans.add(span);
  let results: R | AsyncGenerator<P>;
  try {
    results = await context.with(trace.setSpan(parent, span), fn);
  } catch (error) {
    recordError(span, error);
    span.end();
    throw error;
  }
  if (!(Symbol.asyncIterator in results)) {
    annotateOperation({ ...operation, ...outcomeOf(results.data, results.errors ?? []) }, span);
    span.end();
    return results;
  }
  return tracedPayloads(span, results, operation, outcomeOf);
}

function tracedPayloads<E, P extends TracedResult<E>>(
  span: Span,
  payloads: AsyncGenerator<P>,
  operation: Pick<OperationSummary, 'operationName' | 'operationType'>,
  outcomeOf: OutcomeOf<E>,
): AsyncGenerator<P> {
  let data: unknown;
  const errors: E[] = [];
  let index = 0;
  let started = false;
  let stopped = false;
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    const outcome = outcomeOf(data, errors);
    annotateOperation({ ...operation, ...(stopped ? { outcome: 'aborted', errorCodes: outcome.errorCodes } : outcome) }, span);
    span.end();
  };
  const traced = (async function* () {
    started = true;
    try {
      for await (const payload of payloads) {
        if (index === 0) data = payload.data;
        const partErrors = (payload.incremental ?? []).flatMap((part) => part.errors ?? []);
        errors.push(...(payload.errors ?? []), ...partErrors);
        span.addEvent('graphql.payload', {
          'bankgraph.payload.index': index++,
          'bankgraph.payload.has_next': payload.hasNext ?? false,
          'bankgraph.payload.parts': payload.incremental?.length ?? 0,
          'bankgraph.payload.errors': (payload.errors?.length ?? 0) + partErrors.length,
        });
        yield payload;
      }
    } finally {
      end();
    }
  })();
  // An async generator's return waits for the payload it awaits, perhaps a slow one nobody will read: passed on at once.
  const returnWhenIdle = traced.return.bind(traced);
  traced.return = (value) => {
    stopped = true;
    payloads.return(undefined).catch(() => undefined);
    // Returned before its first payload was asked for, the generator never runs its finally.
    if (!started) end();
    return returnWhenIdle(value);
  };
  return traced;
}
