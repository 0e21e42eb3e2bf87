import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The X-Request-Id a client sent with the request being served, for the log lines written while it is served
 * (`clientRequestId`, beside the gateway's own `requestId`). A client names its own request with it; it is never
 * the gateway's id for the request, which a client could otherwise set to another request's or a job's.
 */
const clientRequestIds = new AsyncLocalStorage<string>();

/** A client's id is kept only when it looks like one: 1 to 64 letters, digits, `.`, `_`, `-` or `:`. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The client's X-Request-Id when it looks like an id; undefined otherwise (then it is not logged at all). */
export function clientRequestIdOf(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && CLIENT_REQUEST_ID.test(header) ? header : undefined;
}

/** Runs `serve` with `id` as the client's request id of every log line it writes; with none, simply runs it. */
export function withClientRequestId<T>(id: string | undefined, serve: () => T): T {
  return id === undefined ? serve() : clientRequestIds.run(id, serve);
}

/** The client's request id of the request being served, if it sent one. */
export function activeClientRequestId(): string | undefined {
  return clientRequestIds.getStore();
}
