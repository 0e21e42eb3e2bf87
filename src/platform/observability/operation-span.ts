import { trace } from '@opentelemetry/api';
import { SpanStatusCode, type Span, type Telemetry } from './telemetry';

/** Spans made by traceOperation: only these are renamed after their operation. */
const operationSpans = new WeakSet<Span>();

/**
 * Runs an operation's execution inside the span `graphql.operation`, active, so resolver and provider spans are
 * its descendants; annotateOperation names it once the operation is known.
 */
export function traceOperation<T>(
  telemetry: Telemetry,
  transport: 'http' | 'ws' | 'mcp',
  requestId: string | undefined,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!telemetry.enabled) return fn(undefined);
  return telemetry.span(
    'graphql.operation',
    { attributes: { 'bankgraph.transport': transport, ...(requestId ? { 'bankgraph.request_id': requestId } : {}) } },
    (span) => {
      if (span) operationSpans.add(span);
      return fn(span);
    },
  );
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
