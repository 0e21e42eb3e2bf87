import { trace } from '@opentelemetry/api';

/**
 * The trace and span ids of the active span, for log lines; undefined outside a sampled span. Only the API is
 * imported here: the logger loads this whether or not tracing is on.
 */
export function activeTraceIds(): { traceId: string; spanId: string } | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return traceFlags & 1 ? { traceId, spanId } : undefined;
}
