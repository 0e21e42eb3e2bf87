/*
 * ProviderHttpClient: the gateway's only way to reach the provider.
 *
 * Connections: one undici Agent, which keeps a keep-alive Pool per origin (`connectionsPerOrigin` sockets each).
 * Idle sockets are dropped after `keepAliveTimeoutMs` (4 s by default, under Node's and most servers' 5 s, so
 * we close first instead of writing onto a socket the server is closing). Timeouts: `connectTimeoutMs` for the
 * TCP/TLS handshake, `headersTimeoutMs` until the status line and headers, `bodyTimeoutMs` between body chunks.
 * undici checks the last two on a coarse clock (about 1 s), so sub-second values behave as about a second.
 *
 * Retries (the rules of stripe-node and datasource-rest, adapted; the decision is `shouldRetry`, retry-decision.ts):
 * - What is retried: connection errors (ECONNRESET, ECONNREFUSED, EPIPE, socket closed, DNS EAI_AGAIN), the
 *   three timeouts, 429, and 5xx except 501/505 (those never get better).
 * - Which requests: every GET; a POST only when the caller marks it `idempotent`, i.e. it carries an idempotency
 *   key the provider deduplicates on (a refund's Idempotency-Key, a withdrawal's transaction_id). A POST without
 *   one may have been applied before the connection died, so repeating it could pay twice.
 * - How often: at most `maxAttempts` sends. Between them, exponential backoff with equal jitter:
 *   min(cap, base·2^(n−1)) · (0.5 + random/2), so concurrent callers spread out but always wait a little.
 * - Retry-After (delta-seconds or HTTP date) on 429/503 is honoured: the wait is at least what it asks. When it
 *   asks more than `retryAfterCapMs`, the client does not hold the app's request that long: it fails at once with
 *   UPSTREAM_RATE_LIMITED / UPSTREAM_UNAVAILABLE, and the app sees retryAfterSeconds.
 * - A 401 (other than a rejected signature) calls the caller's `onUnauthorized(rejectedToken)` once, which
 *   refreshes the token, and resends with the new one; this resend does not count against `maxAttempts`.
 *   A second 401 is final.
 * - Every send is rebuilt and re-signed. The body is encoded once, so every resend carries the same bytes and
 *   the same Idempotency-Key: a retried idempotent POST is byte-identical, which is what the provider's
 *   idempotency check compares.
 * - Every send of a GraphQL operation ends by the operation's deadline (OPERATION_TIMEOUT_MS, see
 *   operation-deadline.ts): a send is aborted when it passes, and a retry whose backoff would end after it is not
 *   made, so a slow provider costs an operation its deadline, not maxAttempts × the HTTP timeouts.
 * - Each route has a circuit breaker (circuit-breakers.ts): after consecutive sends without an answer or with a
 *   5xx it fails fast for a cool-down, without sending. A call with a bank connection's token runs on that
 *   connection's own breaker for the route, so one user's failing data never refuses another's.
 * - Bodies are read up to `maxBodyBytes`; a larger answer is refused while reading (UPSTREAM_ERROR), never buffered.
 * Final failures become GatewayErrors through `upstreamErrorFrom` (./provider-errors.ts).
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { BrokenCircuitError } from 'cockatiel';
import { Agent, type Dispatcher } from 'undici';
import { UpstreamError } from '../errors/gateway-errors';
import { ProviderResponseError, upstreamErrorFrom, type UpstreamErrorContext } from './provider-errors';
import { errorCode, shouldRetry, TRANSIENT_CODES, type FailedSend, type RetryDecision } from './retry-decision';
import { dispatchForAnswer, type ProviderAnswer } from './body-limit';
import { CircuitBreakers, type CircuitBreakerSettings, type CircuitStateName, type ConnectionCircuitChange } from './circuit-breakers';
import { parseDecimalJson } from './decimal-json';
import { LazyProviderList } from './provider-list';
import { OperationDeadlineError, type OperationDeadline } from './operation-deadline';
import { providerCallParent } from '../observability/resolver-spans';
import { SpanKind, SpanStatusCode, trace, type Context, type Span, type Telemetry } from '../observability/telemetry';
import { SignatureReuse, type SigningKey } from './request-signer';

/** The client's timeouts, retries, pool and breakers: the configuration's `limits.providerCalls`, which holds their defaults. */
export interface HttpClientSettings {
  /** TCP/TLS connect timeout. */
  connectTimeoutMs: number;
  /** Time until response headers arrive. */
  headersTimeoutMs: number;
  /** Longest gap between body chunks. */
  bodyTimeoutMs: number;
  /** Sockets per origin. */
  connectionsPerOrigin: number;
  /** Sends per request, first included (the 401 refresh resend is extra). */
  maxAttempts: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  /** Longest Retry-After the client waits out itself. */
  retryAfterCapMs: number;
  /** Largest provider answer read. */
  maxBodyBytes: number;
  /** Per-route (and per-connection) circuit breakers. */
  breaker: CircuitBreakerSettings;
}

/** Idle keep-alive sockets are closed after this: under the 5 s idle timeout common on servers, so the client never reuses a socket the server is closing. */
const KEEP_ALIVE_TIMEOUT_MS = 4_000;

export interface HttpClientConfig extends HttpClientSettings {
  onCircuitStateChange?: (route: string, state: CircuitStateName) => void;
  onConnectionCircuitChange?: (change: ConnectionCircuitChange) => void;
  userAgent?: string;
  /** Needed only for requests with `sign`. */
  signingKey?: SigningKey;
  /** Instead of the client's own Agent, e.g. undici's MockAgent in tests; the client then does not close it. */
  dispatcher?: Dispatcher;
  onAttempt?: (event: AttemptEvent) => void;
  /** Traces every send as a client span (and sends its `traceparent`) when tracing is on. */
  telemetry?: Telemetry;
  /** Test seams for backoff. */
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface AttemptEvent {
  route: string;
  method: string;
  /** Undefined when no response arrived. */
  status: number | undefined;
  durationMs: number;
  /** True for every send after the first. */
  retry: boolean;
  attempt: number;
  /** The connection error's code (ECONNRESET, UND_ERR_HEADERS_TIMEOUT, …) when no response arrived. */
  errorCode?: string;
}

/**
 * How a request gets its bearer token; `onUnauthorized` refreshes it after the provider rejected `rejectedToken`.
 * Both get the request's call options, so a token fetched or refreshed for it keeps its operation's deadline.
 */
export interface BearerAuth {
  /** The bank connection the token is of, when it is a user's: its calls run on their own circuit breaker. */
  readonly connectionId?: string;
  token(options?: CallOptions): Promise<string>;
  onUnauthorized?(rejectedToken: string, options?: CallOptions): Promise<void>;
}

export interface CallOptions {
  /** Forwarded as X-Request-Id, so provider-side logs line up with ours. */
  requestId?: string;
  signal?: AbortSignal;
  /** The GraphQL operation's deadline, when the call is made for one (see operation-deadline.ts). */
  deadline?: OperationDeadline;
}

/**
 * Only the CallOptions of `options`, for the end of a request literal (`{ route, method, …, ...callOptionsOf(options) }`).
 * At the end, not the start: V8 adds every property written after an object spread through its slow runtime path,
 * so a request literal built this way is much cheaper to make. Copying only these fields keeps a larger object
 * handed over as options from overriding the request's own.
 */
export function callOptionsOf(options: CallOptions): CallOptions {
  return { requestId: options.requestId, signal: options.signal, deadline: options.deadline };
}

export interface ProviderRequest extends CallOptions {
  /** Metrics and log name, e.g. `payments.createRefund`. */
  route: string;
  method: 'GET' | 'POST';
  /** Absolute URL; see `providerUrl`. */
  url: string;
  json?: unknown;
  form?: Readonly<Record<string, string | undefined>>;
  headers?: Readonly<Record<string, string>>;
  /** The request carries an idempotency key, so a POST may be retried. */
  idempotent?: boolean;
  auth?: BearerAuth;
  /** Sign into `header`, covering `signedHeaders` (which must be among `headers`). */
  sign?: { header: string; signedHeaders?: readonly string[] };
  /** Parse the success body with parseDecimalJson (the data API). */
  decimals?: boolean;
  /** With decimals: leave the body's `results` array unparsed, as a LazyProviderList (see provider-list.ts). */
  lazyResults?: boolean;
  errorContext?: Omit<UpstreamErrorContext, 'route' | 'cause' | 'requestId'>;
}

export interface ProviderResponse<T> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
}

function isSignatureRejection(body: unknown): boolean {
  const type = (body as { type?: unknown } | undefined)?.type;
  return typeof type === 'string' && type.endsWith('#invalid-signature');
}

/** `base` may carry a path prefix (a real provider's API root), which `new URL(path, base)` would drop. */
export function providerUrl(base: string, path: string, query?: Readonly<Record<string, string | undefined>>): string {
  const url = new URL(base.replace(/\/+$/, '') + path);
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}

interface EncodedBody {
  bytes: Buffer;
  contentType: string;
}

function encodeBody(request: ProviderRequest): EncodedBody | undefined {
  if (request.json !== undefined) return { bytes: Buffer.from(JSON.stringify(request.json), 'utf8'), contentType: 'application/json' };
  if (request.form !== undefined) {
    const form = new URLSearchParams();
    for (const [name, value] of Object.entries(request.form)) if (value !== undefined) form.append(name, value);
    return { bytes: Buffer.from(form.toString(), 'utf8'), contentType: 'application/x-www-form-urlencoded' };
  }
  return undefined;
}

/** Error bodies: JSON when they are, otherwise the text (bounded), kept for logs only. */
function parseErrorBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text.slice(0, 2000);
  }
}

function endAttemptSpan(span: Span, status: number | undefined, errorCode: string | undefined): void {
  if (status !== undefined) span.setAttribute('http.response.status_code', status);
  if (errorCode !== undefined || (status !== undefined && status >= 400)) {
    const type = errorCode ?? String(status);
    span.setAttribute('error.type', type);
    span.setStatus({ code: SpanStatusCode.ERROR, message: type });
  }
  span.end();
}

export class ProviderHttpClient {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly signingKey: { keyId: string; privateKey: KeyObject } | undefined;
  private readonly settings: Omit<HttpClientSettings, 'breaker'> & { random: () => number; sleep: (ms: number, signal?: AbortSignal) => Promise<void> };
  readonly breakers: CircuitBreakers;
  private readonly signatures = new SignatureReuse();

  constructor(private readonly config: HttpClientConfig) {
    this.settings = {
      ...config,
      maxAttempts: Math.max(1, config.maxAttempts),
      random: config.random ?? Math.random,
      sleep: config.sleep ?? ((ms, signal) => delay(ms, undefined, { signal })),
    };
    this.breakers = new CircuitBreakers(
      config.breaker,
      {
        // No answer at all, or a server error; a refusal of our request (4xx) or our own abort says nothing about health.
        error: (error) => TRANSIENT_CODES.has(errorCode(error) ?? ''),
        answer: (answer) => (answer as { status: number }).status >= 500,
      },
      config.onCircuitStateChange,
      config.onConnectionCircuitChange,
    );
    // Parsed once: a PEM parse per signed attempt would be wasted work on the hot path.
    const key = config.signingKey;
    this.signingKey = key && ('privateKey' in key ? key : { keyId: key.keyId, privateKey: createPrivateKey(key.privateKeyPem) });
    this.ownsDispatcher = config.dispatcher === undefined;
    this.dispatcher =
      config.dispatcher ??
      new Agent({
        connections: this.settings.connectionsPerOrigin,
        keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
        keepAliveMaxTimeout: KEEP_ALIVE_TIMEOUT_MS,
        connect: { timeout: this.settings.connectTimeoutMs },
        headersTimeout: this.settings.headersTimeoutMs,
        bodyTimeout: this.settings.bodyTimeoutMs,
      });
  }

  /** Sends `request` under the retry rules above; resolves with a 2xx answer, rejects with a GatewayError. */
  async send<T>(request: ProviderRequest): Promise<ProviderResponse<T>> {
    const url = new URL(request.url);
    const body = encodeBody(request);
    const retryable = request.method === 'GET' || request.idempotent === true;
    // errorContext cannot name these two (its type omits them), so the spread can come last: see callOptionsOf.
    const context: UpstreamErrorContext = { route: request.route, requestId: request.requestId, ...request.errorContext };
    let sendsLeft = this.settings.maxAttempts;
    let refreshed = false;
    const deadline = request.deadline;
    // For the token fetch or refresh: not the caller's signal, as that work is shared with other callers.
    const callOptions: CallOptions = { requestId: request.requestId, deadline };
    /** Why the previous send was repeated, for the next send's span. */
    let retryReason: string | undefined;

    for (let attempt = 1; ; attempt += 1) {
      sendsLeft -= 1;
      const token = request.auth ? await request.auth.token(callOptions) : undefined;
      if (deadline !== undefined && deadline.at <= performance.now()) throw upstreamErrorFrom(undefined, { ...context, cause: new OperationDeadlineError() });
      const deadlineSignal = deadline?.signal();
      const signals: AbortSignal[] = [];
      if (request.signal) signals.push(request.signal);
      if (deadlineSignal) signals.push(deadlineSignal);
      const traced = this.startAttemptSpan(request, url, attempt, retryReason);
      const started = performance.now();
      let outcome: ProviderAnswer | { error: unknown };
      try {
        outcome = await this.breakers.execute(request.route, request.auth?.connectionId, () =>
          dispatchForAnswer(
            this.dispatcher,
            {
              origin: url.origin,
              path: url.pathname + url.search,
              method: request.method,
              headers: this.headersFor(request, url, body, token, traced?.context),
              body: body?.bytes ?? null,
              headersTimeout: this.settings.headersTimeoutMs,
              bodyTimeout: this.settings.bodyTimeoutMs,
            },
            signals,
            this.settings.maxBodyBytes,
          ),
        );
      } catch (error) {
        if (request.signal?.aborted || error instanceof BrokenCircuitError) {
          if (traced) endAttemptSpan(traced.span, undefined, error instanceof BrokenCircuitError ? 'CIRCUIT_OPEN' : 'ABORTED');
          if (request.signal?.aborted) throw error;
          // An open circuit sent nothing: no attempt to report, nothing to retry.
          throw upstreamErrorFrom(undefined, { ...context, cause: error });
        }
        outcome = { error: deadlineSignal?.aborted ? new OperationDeadlineError() : error };
      }
      const status = 'status' in outcome ? outcome.status : undefined;
      if (traced) endAttemptSpan(traced.span, status, 'error' in outcome ? (errorCode(outcome.error) ?? 'UNKNOWN') : undefined);
      this.config.onAttempt?.({
        route: request.route,
        method: request.method,
        status,
        durationMs: performance.now() - started,
        retry: attempt > 1,
        attempt,
        ...('error' in outcome ? { errorCode: errorCode(outcome.error) ?? 'UNKNOWN' } : {}),
      });

      if ('error' in outcome) {
        const decision = this.retryDecision({ errorCode: errorCode(outcome.error) }, retryable, sendsLeft, attempt, deadline);
        if (decision.retry) {
          retryReason = decision.reason;
          await this.settings.sleep(decision.waitMs, request.signal);
          continue;
        }
        throw upstreamErrorFrom(undefined, { ...context, cause: outcome.error });
      }

      if (outcome.status >= 200 && outcome.status < 300) return this.success<T>(outcome, request, context);
      const errorBody = parseErrorBody(outcome.body.toString());
      if (outcome.status === 401 && !refreshed && token !== undefined && request.auth?.onUnauthorized && !isSignatureRejection(errorBody)) {
        refreshed = true;
        sendsLeft += 1;
        retryReason = 'token_refresh';
        await request.auth.onUnauthorized(token, callOptions);
        continue;
      }
      const decision = this.retryDecision(outcome, retryable, sendsLeft, attempt, deadline);
      if (decision.retry) {
        retryReason = decision.reason;
        await this.settings.sleep(decision.waitMs, request.signal);
        continue;
      }
      // The provider may echo the bearer token it rejected; it must not reach a message or a log.
      const secrets = token === undefined ? context.secrets : [...(context.secrets ?? []), token];
      throw upstreamErrorFrom({ status: outcome.status, headers: outcome.headers, body: errorBody }, { ...context, secrets });
    }
  }

  /** A client span for one send, child of the resolver (or job, or webhook) it serves; undefined with tracing off. */
  private startAttemptSpan(request: ProviderRequest, url: URL, attempt: number, retryReason: string | undefined): { span: Span; context: Context } | undefined {
    const telemetry = this.config.telemetry;
    if (!telemetry?.tracer) return undefined;
    const parent = providerCallParent(telemetry);
    const span = telemetry.tracer.startSpan(
      `${request.method} ${request.route}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': request.method,
          'server.address': url.hostname,
          'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
          'bankgraph.provider.route': request.route,
          'bankgraph.provider.attempt': attempt,
          ...(attempt > 1 ? { 'http.request.resend_count': attempt - 1 } : {}),
          ...(retryReason ? { 'bankgraph.provider.retry_reason': retryReason } : {}),
        },
      },
      parent,
    );
    return { span, context: trace.setSpan(parent, span) };
  }

  private headersFor(
    request: ProviderRequest,
    url: URL,
    body: EncodedBody | undefined,
    token: string | undefined,
    traceContext?: Context,
  ): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json', ...request.headers };
    if (this.config.userAgent) headers['user-agent'] = this.config.userAgent;
    if (body) headers['content-type'] = body.contentType;
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (request.requestId) headers['x-request-id'] = request.requestId;
    if (request.sign) {
      if (!this.signingKey) throw new Error(`route ${request.route} must be signed but the HTTP client has no signing key`);
      headers[request.sign.header] = this.signatures.sign({ method: request.method, path: url.pathname, headers, body: body?.bytes ?? '' }, this.signingKey, {
        signedHeaders: request.sign.signedHeaders,
      });
    }
    // After signing: trace context is not part of what the provider verifies.
    if (traceContext) this.config.telemetry?.inject(traceContext, headers);
    return headers;
  }

  private success<T>(outcome: ProviderAnswer, request: ProviderRequest, context: UpstreamErrorContext): ProviderResponse<T> {
    if (outcome.body.isBlankFrom(0)) return { status: outcome.status, headers: outcome.headers, body: undefined as T };
    try {
      const body = request.decimals
        ? request.lazyResults
          ? { results: LazyProviderList.fromResultsBody(outcome.body) }
          : parseDecimalJson(outcome.body.toString())
        : (JSON.parse(outcome.body.toString()) as unknown);
      return { status: outcome.status, headers: outcome.headers, body: body as T };
    } catch (error) {
      throw new UpstreamError(
        'The provider sent an answer the gateway could not read. Try again later; report it if it persists.',
        {},
        {
          originalError: new ProviderResponseError(
            context.route,
            outcome.status,
            outcome.body.text(0, Math.min(2000, outcome.body.length)),
            undefined,
            context.requestId,
            error,
          ),
        },
      );
    }
  }

  private retryDecision(send: FailedSend, retryable: boolean, sendsLeft: number, attempt: number, deadline: OperationDeadline | undefined): RetryDecision {
    const ceiling = Math.min(this.settings.backoffCapMs, this.settings.backoffBaseMs * 2 ** (attempt - 1));
    return shouldRetry(send, {
      retryable,
      sendsLeft,
      backoffMs: ceiling * (0.5 + this.settings.random() / 2),
      retryAfterCapMs: this.settings.retryAfterCapMs,
      msLeft: deadline === undefined ? undefined : deadline.at - performance.now(),
      nowMs: Date.now(),
    });
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}
