/**
 * Injected faults, for tests and demos: `match` is `"<METHOD> <path pattern>"` or just a path pattern, where `*`
 * stands for one path segment and a trailing `/**` for any rest, e.g. `"POST /v1/withdrawals"` or
 * `"GET /data/v1/accounts/*\/balance"`.
 */
export interface FaultSpec {
  match: string;
  /**
   * Answer with this status instead of serving the request: with `body`, any status from 200 to 599; without it,
   * 400 to 599 with a problem or OAuth-style body in the route's shape.
   */
  status?: number;
  /** Answer with this JSON value (and `status`, 200 when omitted): odd provider answers without a proxy. */
  body?: unknown;
  /** Seconds, sent as Retry-After with the status. */
  retryAfter?: number;
  /** Delay before the request is served (or the fault applied). */
  latencyMs?: number;
  /** Destroy the connection without an answer. */
  reset?: boolean;
  /** Answer 200 with this body, which is not valid JSON, instead of serving the request. */
  malformed?: boolean;
  /** How many matching requests the fault applies to; unlimited until cleared when omitted. */
  times?: number;
  /**
   * When set with `status` or `reset`, the request is first served for real and the fault replaces the answer:
   * the provider did the work but the client never heard (the case idempotency keys exist for).
   */
  afterProcessing?: boolean;
}

interface ActiveFault extends FaultSpec {
  id: number;
  method?: string;
  pattern: RegExp;
  remaining: number;
}

export class FaultInjector {
  private faults: ActiveFault[] = [];
  private nextId = 1;

  add(spec: FaultSpec): number {
    const parts = spec.match.trim().split(/\s+/);
    const [method, path] = parts.length === 2 ? [parts[0]!.toUpperCase(), parts[1]!] : [undefined, parts[0]!];
    const id = this.nextId++;
    this.faults.push({ ...spec, id, method, pattern: compile(path), remaining: spec.times ?? Number.POSITIVE_INFINITY });
    return id;
  }

  clear(): void {
    this.faults = [];
  }

  /** The first active fault matching this request, counted as used. */
  take(method: string, path: string): FaultSpec | undefined {
    const fault = this.faults.find((f) => (!f.method || f.method === method) && f.pattern.test(path));
    if (!fault) return undefined;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.faults = this.faults.filter((f) => f !== fault);
    return fault;
  }

  list(): FaultSpec[] {
    return this.faults.map(({ match, status, body, retryAfter, latencyMs, reset, malformed, afterProcessing, remaining }) => ({
      match,
      status,
      body,
      retryAfter,
      latencyMs,
      reset,
      malformed,
      afterProcessing,
      times: Number.isFinite(remaining) ? remaining : undefined,
    }));
  }
}

export function validateFaultSpec(value: unknown): FaultSpec | string {
  if (typeof value !== 'object' || value === null) return 'the body must be a JSON object';
  const spec = value as Record<string, unknown>;
  if (typeof spec.match !== 'string' || spec.match.trim() === '') return 'match must be a string such as "POST /v1/withdrawals"';
  const lowestStatus = spec.body === undefined ? 400 : 200;
  if (spec.status !== undefined && !(Number.isInteger(spec.status) && (spec.status as number) >= lowestStatus && (spec.status as number) <= 599)) {
    return spec.body === undefined ? 'status must be an integer from 400 to 599 (or from 200 with a body)' : 'status must be an integer from 200 to 599';
  }
  if (spec.body !== undefined && (spec.reset || spec.malformed)) return 'body cannot be combined with reset or malformed';
  for (const key of ['retryAfter', 'latencyMs', 'times'] as const) {
    if (spec[key] !== undefined && !(Number.isInteger(spec[key]) && (spec[key] as number) >= 0)) return `${key} must be a non-negative integer`;
  }
  for (const key of ['reset', 'malformed', 'afterProcessing'] as const) {
    if (spec[key] !== undefined && typeof spec[key] !== 'boolean') return `${key} must be a boolean`;
  }
  const answers = spec.status !== undefined || spec.body !== undefined || spec.reset || spec.malformed;
  if (!answers && spec.latencyMs === undefined) return 'give at least one of status, body, reset, malformed or latencyMs';
  // Without an answer to replace, the request would be served twice, the second time with its body already read.
  if (spec.afterProcessing && !answers) return 'afterProcessing needs status, body, reset or malformed: the answer that replaces the real one';
  return spec as unknown as FaultSpec;
}

function compile(pattern: string): RegExp {
  const escaped = pattern
    .split('/')
    .map((segment) => (segment === '**' ? '.*' : segment === '*' ? '[^/]+' : segment.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${escaped.replace(/\/\.\*$/, '(?:/.*)?')}/?$`);
}
