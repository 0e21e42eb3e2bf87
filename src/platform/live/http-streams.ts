import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult, GraphQLError } from 'graphql';
import type { Principal } from '../access/principal';
import { ForbiddenError, UnauthenticatedError } from '../errors/gateway-errors';
import type { IncrementalPayload } from '../graphql/incremental-delivery';
import { describePrincipal, type OperationContext } from '../graphql/operation-context';
import { logErrorDetail } from '../graphql/operation-observer.plugin';
import type { ClientResult, OperationPipeline } from '../graphql/operation-pipeline';
import { sendGraphQLRefusal } from '../graphql/refusals';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import type { Logger } from '../observability/logger';
import { outcomeOf, type OperationRecorder } from '../observability/operation-recorder';
import { traceOperationResults } from '../observability/operation-span';
import { Telemetry } from '../observability/telemetry';
import { operationDeadline } from '../provider/operation-deadline';
import type { CacheMode } from '../provider/response-cache';
import { cacheModeOf } from '../graphql/http-handler';
import { admitOperation, liveWorkKey } from './operation-admission';
import { UNAUTHORIZED_CLOSE_CODE, type PrincipalSockets } from './principal-sockets';
import type { SharedNext } from './next-frame';
import type { FanOut } from './fan-out';
import type { SubscriptionCaps } from './subscription-caps';
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
  /** The same caps as the WebSocket's: one principal's subscriptions count once whatever carries them. */
  caps: SubscriptionCaps;
  /** The same registry as the WebSockets': a revocation anywhere ends the principal's streams too. */
  sockets: PrincipalSockets;
  recorder: OperationRecorder;
  metrics: GatewayMetrics;
  logger: Logger;
  originPolicy: WebSocketOriginPolicy;
  /** How often an idle stream gets a heartbeat (STREAM_HEARTBEAT_MS). */
  heartbeatMs: number;
  /** The deadline of a query or mutation sent over SSE, as over HTTP. */
  operationTimeoutMs: number;
  /** `cacheMode` is the request's: `Cache-Control: no-cache` skips the response cache, as on plain HTTP. */
  createContext(principal: Principal, requestId: string, cacheMode: CacheMode): OperationContext;
  /** How an event's result reaches the subscribers: the fast paths, or the ordinary path (FAST_PATHS=off). */
  fanOut: FanOut;
  /** Queries and mutations streamed over HTTP get an operation span, as over plain HTTP and WebSocket. */
  telemetry?: Telemetry;
}

export interface StreamOperation {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  started: number;
  transport: 'sse' | 'multipart';
  /** The request's lookup: its principal, as far as the revocations heard since allow, asked as the stream registers; then ended. */
  lookup: { trusted(): Principal; end(): void };
  query: string;
  operationName?: string | null;
  variables?: Readonly<Record<string, unknown>> | null;
  /** False on GET: a mutation must not run from a link or an image. */
  mutationsAllowed: boolean;
  /** Where the fan-out writes this stream's error-free subscription results straight to the response. */
  direct: DirectWrites;
}

/**
 * Subscriptions (and, over SSE, queries and mutations) streamed over HTTP, under the WebSocket path's rules: the
 * operation admitted by the same function (operation-admission.ts: limits, cost, caps), its results masked with the
 * bank connections' partial failures and the request id by the same pipeline, the stream registered with the
 * WebSockets' PrincipalSockets so that a logout, a revoked user or bank, an expired credential or a failed recheck
 * ends it on every instance, and ended cleanly when the gateway closes.
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

  /** A refusal before the operation is known (a persisted document's), as the stream's only result. */
  refusal(error: unknown, requestId: string): StreamedResult {
    return { errors: this.deps.pipeline.clientErrors([this.deps.pipeline.refusal(error)], undefined, requestId) };
  }

  /** The operation's results as the client gets them; the stream ends when the operation, the principal or the gateway does. */
  async *run(operation: StreamOperation): AsyncGenerator<StreamedResult> {
    const handle = new StreamHandle(operation.res);
    this.open.add(handle);
    const record = new StreamRecord(operation);
    try {
      yield* this.execute(operation, handle, record);
    } finally {
      this.open.delete(handle);
      this.deps.recorder.record(record.entry(handle.peerGone && !record.completed ? 'aborted' : undefined));
    }
  }

  /** Ends every stream (each client sees its operation complete) and resolves once they are gone or at the deadline. */
  async dispose(deadline: number): Promise<void> {
    for (const handle of this.open) handle.finish();
    while (this.open.size > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  private async *execute(operation: StreamOperation, handle: StreamHandle, record: StreamRecord): AsyncGenerator<StreamedResult> {
    const { pipeline } = this.deps;
    const give = (result: StreamedResult): StreamedResult => {
      operation.direct.gave();
      return record.sent(result);
    };
    const principal = operation.lookup.trusted();
    record.principal = describePrincipal(principal);
    // Registered before anything runs: a revocation from here on ends the stream; one heard during the lookup, now.
    this.deps.sockets.add(principal, handle);
    operation.lookup.end();
    const capKey = liveWorkKey(principal, () => operation.req.socket.remoteAddress);
    const admitted = admitOperation(this.deps, { ...operation, capKey, onConnection: 0, endedBecause: () => handle.endedError(pipeline) });
    if ('errors' in admitted) return yield give(this.refused(admitted.errors, operation.requestId));
    record.operationName = admitted.operation.name?.value;
    record.operationType = admitted.operation.operation;
    const context = this.deps.createContext(principal, operation.requestId, cacheModeOf(operation.req));
    const args = { ...admitted.args, contextValue: context };
    if (admitted.subscriptionField === undefined) {
      if (admitted.operation.operation === 'mutation' && !operation.mutationsAllowed) {
        return yield give(this.refused([pipeline.refusal(new ForbiddenError('A mutation is not run from a GET request: POST it.'))], operation.requestId));
      }
      context.deadline = operationDeadline(this.deps.operationTimeoutMs);
      const named = { operationName: record.operationName, operationType: record.operationType };
      // Multipart answers on /graphql, as plain HTTP does; SSE has its own path.
      const transport = operation.transport === 'multipart' ? 'http' : 'sse';
      const telemetry = this.deps.telemetry ?? Telemetry.off;
      const results = await traceOperationResults(telemetry, transport, operation.requestId, named, outcomeOf, () => pipeline.execute(args));
      if (!(Symbol.asyncIterator in results)) return yield give(this.format(results, context));
      // Ended from outside (a revocation, the gateway closing) as a subscription is; the client going away ends it too.
      const payloads = new EndableResults<IncrementalPayload | StreamedResult>(results);
      handle.attach(payloads, (reason) => ({ ...this.refused([reason], operation.requestId), [TERMINAL]: true }), pipeline);
      for await (const payload of payloads) yield give(TERMINAL in payload ? payload : this.format(payload as IncrementalPayload, context));
      record.completed = !handle.peerGone;
      return;
    }
    this.deps.metrics.subscriptionStarted(admitted.subscriptionField);
    const { fanOut } = this.deps;
    fanOut.deliverDirectly(context, (shared) => handle.readyState === 1 && operation.direct.write(shared));
    try {
      const source = await fanOut.subscribe(args);
      if (!(Symbol.asyncIterator in source)) return yield give(this.format(source, context));
      const results = new EndableResults<ExecutionResult | StreamedResult>(source);
      handle.attach(results, (reason) => ({ ...this.refused([reason], operation.requestId), [TERMINAL]: true }), pipeline);
      for await (const result of results) yield give(TERMINAL in result ? result : this.format(result as ExecutionResult, context));
      record.completed = !handle.peerGone;
    } finally {
      this.deps.caps.release(capKey);
      this.deps.metrics.subscriptionEnded(admitted.subscriptionField);
    }
  }

  private refused(errors: readonly GraphQLError[], requestId: string): StreamedResult {
    for (const error of errors) logErrorDetail(this.deps.logger, error, requestId);
    return { errors: this.deps.pipeline.clientErrors(errors, undefined, requestId) };
  }

  private format(result: ExecutionResult | IncrementalPayload, context: OperationContext): StreamedResult {
    for (const error of result.errors ?? []) logErrorDetail(this.deps.logger, error, context.requestId);
    if ('incremental' in result)
      for (const part of result.incremental ?? []) for (const error of part.errors ?? []) logErrorDetail(this.deps.logger, error, context.requestId);
    return this.deps.pipeline.clientResult(result, context);
  }
}

/** The operation's one log line and metrics, as the WebSocket guard records them. */
class StreamRecord {
  principal = 'anonymous';
  operationName: string | undefined;
  operationType: string | undefined;
  completed = false;
  private outcome: ReturnType<typeof outcomeOf> | undefined;

  constructor(private readonly operation: StreamOperation) {
    this.operationName = operation.operationName ?? undefined;
  }

  sent(result: StreamedResult): StreamedResult {
    if (result.errors || !this.outcome) this.outcome = outcomeOf(result.data, result.errors);
    return result;
  }

  entry(forced: 'aborted' | undefined): Parameters<OperationRecorder['record']>[0] {
    return {
      requestId: this.operation.requestId,
      principal: this.principal,
      transport: this.operation.transport,
      operationName: this.operationName,
      operationType: this.operationType,
      durationMs: performance.now() - this.operation.started,
      ...(this.outcome && this.outcome.outcome !== 'success' ? this.outcome : { outcome: forced ?? 'success' }),
    };
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
