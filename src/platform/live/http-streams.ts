import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult, GraphQLError } from 'graphql';
import type { Principal } from '../access/principal';
import { ForbiddenError, UnauthenticatedError } from '../errors/gateway-errors';
import type { IncrementalPayload } from '../graphql/incremental-delivery';
import { describePrincipal, type OperationContext } from '../graphql/operation-context';
import type { ClientResult, OperationPipeline, OperationResults } from '../graphql/operation-pipeline';
import { isOwnPage, type DocumentRequest } from '../graphql/persisted/persisted-documents';
import { sendGraphQLRefusal } from '../graphql/refusals';
import { cacheModeOf } from '../graphql/http-handler';
import type { Logger } from '../observability/logger';
import type { CacheMode } from '../provider/response-cache';
import { principalKey } from '../http/principal-key';
import type { LiveOperation, OperationStages } from './operation-stages';
import { UNAUTHORIZED_CLOSE_CODE, type PrincipalSockets } from './principal-sockets';
import type { SharedNext } from './next-frame';
import type { FanOut } from './fan-out';
import type { WebSocketOriginPolicy } from './websocket-origin';

/** Marks the result that ends a stream because its principal may no longer read it (multipart sends it as a transport error). */
export const TERMINAL = Symbol('terminal');

/** One result as the client gets it; a symbol key never reaches the JSON. */
export interface StreamedResult extends ClientResult {
  [TERMINAL]?: true;
}

/** Said (403) to a stream that would sign in with the session cookie from a foreign Origin. */
export const FOREIGN_ORIGIN_MESSAGE =
  'Session cookie refused from this Origin: use the gateway origin or one in CORS_ORIGINS (or its older name ALLOWED_ORIGINS), or send Authorization: Bearer <token>.';

/** Said (403) to a stream that would sign in with the session cookie from a request another page could have made. */
export const CROSS_SITE_REQUEST_MESSAGE =
  'Session cookie refused for a request the browser says another page could have made (Sec-Fetch-Mode: no-cors, Sec-Fetch-Site: cross-site, ' +
  'or same-site with no Origin): open the stream with fetch or EventSource from the gateway origin or one in CORS_ORIGINS, or send Authorization: Bearer <token>.';

export interface HttpStreamsDeps {
  pipeline: OperationPipeline;
  /** The stage list every live operation runs (operation-stages.ts), the same as the WebSocket's. */
  stages: OperationStages;
  /** The same registry as the WebSockets': a revocation anywhere ends the principal's streams too. */
  sockets: PrincipalSockets;
  logger: Logger;
  originPolicy: WebSocketOriginPolicy;
  /** How often an idle stream gets a heartbeat (STREAM_HEARTBEAT_MS). */
  heartbeatMs: number;
  /** `cacheMode` is the request's: `Cache-Control: no-cache` skips the response cache, as on plain HTTP. */
  createContext(principal: Principal, requestId: string, cacheMode: CacheMode): OperationContext;
  /** How an event's result reaches the subscribers: the fast paths, or the ordinary path (FAST_PATHS=off). */
  fanOut: FanOut;
}

export interface StreamOperation {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  started: number;
  transport: 'sse' | 'multipart';
  /** The request's lookup: its principal, as far as the revocations heard since allow, asked as the stream registers; then ended. */
  lookup: { trusted(): Principal; end(): void };
  /** What the client named to run: a text, a persisted document's id or an APQ hash. */
  document: DocumentRequest;
  /** The text to run, when the transport resolved the document itself (/graphql must, to know it streams). */
  query?: string;
  operationName?: string | null;
  variables?: Readonly<Record<string, unknown>> | null;
  /** False on GET: a mutation must not run from a link or an image. */
  mutationsAllowed: boolean;
  /** Where the fan-out writes this stream's error-free subscription results straight to the response. */
  direct: DirectWrites;
}

/**
 * Subscriptions (and, over SSE, queries and mutations; over multipart, @defer and @stream payloads) streamed over
 * HTTP: the adapter of SSE and multipart onto the stage list the WebSocket runs too (operation-stages.ts), the stream
 * registered with the WebSockets' PrincipalSockets so that a logout, a revoked user or bank, an expired credential or
 * a failed recheck ends it on every instance, and ended cleanly when the gateway closes.
 */
export class HttpStreams {
  private readonly open = new Set<StreamHandle>();

  constructor(private readonly deps: HttpStreamsDeps) {}

  get heartbeatMs(): number {
    return this.deps.heartbeatMs;
  }

  /**
   * Cross-site request forgery as the WebSocket's cross-site hijacking: a stream that would sign in with the session
   * cookie is served only to the gateway's origin or CORS_ORIGINS, and never to a request the browser says
   * another page could have made (websocket-origin.ts, streamRefusal). True when it was refused (403 sent).
   */
  refuseForeignOrigin(req: IncomingMessage, res: ServerResponse, requestId: string): boolean {
    const reason = this.deps.originPolicy.streamRefusal(req.headers);
    if (reason === undefined) return false;
    const { origin, 'sec-fetch-mode': mode, 'sec-fetch-site': site } = req.headers;
    this.deps.logger.warn({ origin, secFetchMode: mode, secFetchSite: site, reason, requestId }, 'stream refused: session cookie from another page');
    const message = reason === 'FOREIGN_ORIGIN' ? FOREIGN_ORIGIN_MESSAGE : CROSS_SITE_REQUEST_MESSAGE;
    sendGraphQLRefusal(req, res, 403, { message, extensions: { code: 'FORBIDDEN', reason } }, requestId);
    return true;
  }

  /** The operation's results as the client gets them; the stream ends when the operation, the principal or the gateway does. */
  async *run(operation: StreamOperation): AsyncGenerator<StreamedResult> {
    const handle = new StreamHandle(operation.res);
    const principal = operation.lookup.trusted();
    const live = this.liveOperation(operation, principal, handle);
    this.open.add(handle);
    let completed = false;
    try {
      completed = yield* this.execute(operation, principal, handle, live);
    } finally {
      this.open.delete(handle);
      this.deps.stages.finish(live, handle.peerGone && !completed ? 'aborted' : undefined);
    }
  }

  /** Ends every stream (each client sees its operation complete) and resolves once they are gone or at the deadline. */
  async dispose(deadline: number): Promise<void> {
    for (const handle of this.open) handle.finish();
    while (this.open.size > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  private liveOperation(operation: StreamOperation, principal: Principal, handle: StreamHandle): LiveOperation {
    return {
      requestId: operation.requestId,
      transport: operation.transport,
      started: operation.started,
      principal: describePrincipal(principal),
      principalKey: principalKey(principal, () => operation.req.socket.remoteAddress),
      document: operation.document,
      query: operation.query,
      fromOwnPage: isOwnPage(operation.req.headers),
      operationName: operation.operationName,
      variables: operation.variables,
      // The HTTP guard spent the allowance before the body was read.
      allowanceSpent: true,
      onConnection: 0,
      mutationsAllowed: operation.mutationsAllowed,
      endedBecause: () => handle.endedError(this.deps.pipeline),
    };
  }

  /** Yields the operation's results; true when it ran to its end (not cut short by the client's going). */
  private async *execute(operation: StreamOperation, principal: Principal, handle: StreamHandle, live: LiveOperation): AsyncGenerator<StreamedResult, boolean> {
    const { pipeline, stages } = this.deps;
    const give = (result: StreamedResult): StreamedResult => {
      operation.direct.gave();
      return result;
    };
    const lastWords = (reason: GraphQLError): StreamedResult => ({ ...stages.refused(live, [reason]), [TERMINAL]: true });
    // Registered before anything runs: a revocation from here on ends the stream; one heard during the lookup, now.
    this.deps.sockets.add(principal, handle);
    operation.lookup.end();
    const admitted = await stages.admit(live);
    if ('errors' in admitted) {
      yield give(stages.refused(live, admitted.errors));
      return true;
    }
    const context = stages.context(live, this.deps.createContext(principal, operation.requestId, cacheModeOf(operation.req)));
    const args = { ...admitted.args, contextValue: context };
    let source: OperationResults | AsyncIterableIterator<ExecutionResult>;
    if (live.subscriptionField === undefined) {
      source = await stages.execute(live, args);
    } else {
      this.deps.fanOut.deliverDirectly(context, (shared) => handle.readyState === 1 && operation.direct.write(shared));
      source = await this.deps.fanOut.subscribe(args);
    }
    if (!(Symbol.asyncIterator in source)) {
      yield give(stages.format(live, source, context));
      return true;
    }
    // Ended from outside (a revocation, the gateway closing) as a subscription is; the client going away ends it too.
    const results = new EndableResults<ExecutionResult | IncrementalPayload | StreamedResult>(source);
    handle.attach(results, lastWords, pipeline);
    for await (const result of results) yield give(TERMINAL in result ? result : stages.format(live, result as ExecutionResult, context));
    return !handle.peerGone;
  }
}

/**
 * One HTTP stream as PrincipalSockets sees a socket: closing it (a revocation, an expiry, a failed recheck) ends its
 * operation with a last result saying why; the response closing (the client went) ends it silently.
 */
class StreamHandle {
  readyState = 1;
  peerGone = false;
  private ended: { code: number; reason: string } | undefined;
  private results: EndableResults<ExecutionResult | StreamedResult> | undefined;
  private terminal: ((reason: GraphQLError) => StreamedResult) | undefined;
  private pipeline: OperationPipeline | undefined;

  constructor(private readonly res: ServerResponse) {
    res.once('close', () => {
      this.readyState = 3;
      this.peerGone = !res.writableFinished;
      this.results?.end();
    });
  }

  once(event: 'close', listener: () => void): this {
    this.res.once(event, listener);
    return this;
  }

  /** From PrincipalSockets: the principal may no longer read this stream. */
  close(code: number, reason: string): void {
    if (this.ended || this.readyState >= 2) return;
    this.ended = { code, reason };
    this.readyState = 2;
    const error = this.pipeline && this.endedError(this.pipeline);
    if (error && this.terminal) this.results?.end(this.terminal(error));
  }

  /** The gateway is closing: the operation completes. */
  finish(): void {
    this.readyState = Math.max(this.readyState, 2);
    this.results?.end();
  }

  attach(results: EndableResults<ExecutionResult | StreamedResult>, terminal: (reason: GraphQLError) => StreamedResult, pipeline: OperationPipeline): void {
    this.results = results;
    this.terminal = terminal;
    this.pipeline = pipeline;
    // Closed while the subscription was being set up.
    const error = this.endedError(pipeline);
    if (error) results.end(terminal(error));
    else if (this.readyState >= 2) results.end();
  }

  endedError(pipeline: OperationPipeline): GraphQLError | undefined {
    if (!this.ended) return undefined;
    const message = `This stream was closed: ${this.ended.reason}.`;
    return pipeline.refusal(this.ended.code === UNAUTHORIZED_CLOSE_CODE ? new UnauthenticatedError(message) : new ForbiddenError(message));
  }
}

/**
 * A subscription's results that can be ended from outside while its next event is awaited (graphql-js's iterators
 * finish a pending `next` only when an event comes), optionally with a last result of its own.
 */
class EndableResults<T> implements AsyncIterableIterator<T> {
  private waiting: ((result: IteratorResult<T>) => void) | undefined;
  private last: T | undefined;
  private ended = false;

  constructor(private readonly inner: AsyncIterator<T>) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.ended) return Promise.resolve(this.takeLast());
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.inner.next().then(
        (result) => {
          if (this.waiting !== resolve) return;
          this.waiting = undefined;
          resolve(result);
        },
        (error: unknown) => {
          if (this.waiting !== resolve) return;
          this.waiting = undefined;
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  end(last?: T): void {
    if (this.ended) return;
    this.ended = true;
    this.last = last;
    this.inner.return?.().catch(() => undefined);
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.(this.takeLast());
  }

  return(): Promise<IteratorResult<T>> {
    this.end();
    this.last = undefined;
    return Promise.resolve({ done: true, value: undefined });
  }

  private takeLast(): IteratorResult<T> {
    const last = this.last;
    this.last = undefined;
    return last === undefined ? { done: true, value: undefined } : { done: false, value: last };
  }
}

/**
 * The fan-out's fast path for one stream (FanOut.deliverDirectly, fan-out.ts): an event's error-free result,
 * serialised once for every subscriber of the operation and framed once per transport, written straight to the
 * response, where it would otherwise travel through the stream's iterators and be serialised again for each
 * subscriber. Only while the transport has written every result the stream gave it (so nothing is overtaken) and
 * the socket takes more; otherwise the result goes the ordinary way, behind the others, and waits for the drain.
 */
export class DirectWrites {
  private given = 0;
  private written = 0;

  constructor(
    private readonly res: ServerResponse,
    /** The transport's framing of one result's JSON, exactly as its ordinary path writes it. */
    private readonly framing: (json: string) => string,
  ) {}

  /** The stream gave the transport a result to write. */
  gave(): void {
    this.given++;
  }

  /** The transport wrote a result it was given (to the response, however full its buffer). */
  wrote(): void {
    this.written++;
  }

  /** True when the result was written; false sends it the ordinary way. */
  write(shared: SharedNext): boolean {
    const { res } = this;
    if (this.given !== this.written || !res.headersSent || !res.writable || res.writableNeedDrain) return false;
    res.write(shared.encoded(this.framing));
    return true;
  }
}

/**
 * Writes one chunk of a stream; when the socket's buffer is full, waits until it drains (or the response closes),
 * so a slow reader holds back its own stream instead of growing the gateway's memory.
 */
export async function writeChunk(res: ServerResponse, chunk: string): Promise<void> {
  if (!res.writable || res.write(chunk)) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
