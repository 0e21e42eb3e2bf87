export interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Sandbox-independent wall-clock time the request arrived, ISO 8601 with milliseconds. */
  time: string;
  /** Milliseconds since the sandbox started, with sub-millisecond precision, for measuring overlap. */
  startedMs: number;
  endedMs?: number;
  status?: number;
}

/** Every provider call the sandbox received (control routes excluded), so tests can count what the gateway did. */
export class RequestLog {
  private entries: LoggedRequest[] = [];
  private readonly origin = performance.now();

  /** A cap keeps a long benchmark from growing memory without bound; the oldest entries go first. */
  constructor(private readonly limit = 100_000) {}

  start(method: string, path: string, query: URLSearchParams): LoggedRequest {
    const entry: LoggedRequest = {
      method,
      path,
      query: Object.fromEntries(query),
      time: new Date().toISOString(),
      startedMs: performance.now() - this.origin,
    };
    this.entries.push(entry);
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
    return entry;
  }

  finish(entry: LoggedRequest, status: number): void {
    entry.status = status;
    entry.endedMs = performance.now() - this.origin;
  }

  list(): LoggedRequest[] {
    return [...this.entries];
  }

  clear(): void {
    this.entries = [];
  }
}
