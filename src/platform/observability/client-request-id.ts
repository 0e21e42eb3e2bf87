/**
 * The X-Request-Id a client sent, kept beside the gateway's own id for its request: every log line of the request
 * (one that names its `requestId`, or is written by a logger bound to it) gets `clientRequestId` too. A client
 * names its own request with it; it is never the gateway's id for the request, which a client could otherwise
 * set to another request's or a job's. Looked up by request id rather than carried in AsyncLocalStorage, which on
 * Node 20 would put promise hooks on every promise of every request.
 */
const byRequestId = new Map<string, string>();

/** How long an id stays known after its response closed: a stream logs its last line just after. */
const KEPT_AFTER_CLOSE_MS = 5_000;

/** A client's id is kept only when it looks like one: 1 to 64 letters, digits, `.`, `_`, `-` or `:`. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The client's X-Request-Id when it looks like an id; undefined otherwise (then it is not logged at all). */
export function clientRequestIdOf(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && CLIENT_REQUEST_ID.test(header) ? header : undefined;
}

/** Notes the client's id (if it sent one that looks like an id) for the request's lines, until its response is gone. */
export function noteClientRequestId(
  requestId: string,
  header: string | string[] | undefined,
  response: { once(event: 'close', listener: () => void): unknown },
): void {
  const clientRequestId = clientRequestIdOf(header);
  if (clientRequestId === undefined) return;
  byRequestId.set(requestId, clientRequestId);
  response.once('close', () => setTimeout(() => byRequestId.delete(requestId), KEPT_AFTER_CLOSE_MS).unref());
}

/** The client's id for the request of this log line; the logger's bindings are read only while some client sent one. */
export function clientRequestIdOfLine(line: object, bindings: () => Record<string, unknown>): string | undefined {
  if (byRequestId.size === 0) return undefined;
  const requestId = (line as { requestId?: unknown }).requestId ?? bindings().requestId;
  return typeof requestId === 'string' ? byRequestId.get(requestId) : undefined;
}
