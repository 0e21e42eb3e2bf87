import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApolloServer, HeaderMap } from '@apollo/server';
import type { Principal } from '../access/principal';
import { describePrincipal, type AgentLabel, type OperationContext } from './operation-context';
import { withRequestIdOnAnswer } from './operation-errors';
import type { OperationPipeline } from './operation-pipeline';
import { isOwnPage, type DocumentRequest } from './persisted/persisted-documents';
import { GatewayError } from '../errors/gateway-errors';
import { acceptsMultipartIncremental, acceptsMultipartSubscription } from './http-subscription.plugin';
import { asksForIncrementalDelivery } from './incremental-delivery';
import { AnswerCache, type CachedAnswer } from '../http/answer-cache';
import { PayloadTooLargeError, readBody } from '../http/body';
import type { HttpOperationGuard } from '../http/http-operation-guard';
import { principalKey } from '../http/principal-key';
import { requestUrl } from '../http/request-url';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import type { OperationRecorder } from '../observability/operation-recorder';
import { traceOperation } from '../observability/operation-span';
import type { Telemetry } from '../observability/telemetry';
import { operationDeadline, type OperationDeadline } from '../provider/operation-deadline';
import type { CacheMode } from '../provider/response-cache';

/** A principal looked up for one request, and the same principal as far as revocations heard since allow. */
export interface PrincipalLookup {
  principal: Principal;
  trusted(): Principal;
  /**
   * Ends the lookup before the response does (it ends when the response closes): a subscription stream, registered
   * from then on to be closed by any revocation, must not keep every revocation heard for as long as it is open.
   */
  end(): void;
}

export interface GraphqlHttpDeps {
  pipeline: OperationPipeline;
  guard: HttpOperationGuard;
  recorder: OperationRecorder;
  metrics: GatewayMetrics;
  telemetry: Telemetry;
  production: boolean;
  maxBodyBytes: number;
  operationTimeoutMs: number;
  /** Resolves the caller; ends the lookup when the response closes, so a revocation heard meanwhile is still seen. */
  lookupPrincipal(req: IncomingMessage, res: ServerResponse): Promise<PrincipalLookup>;
  createContext(principal: Principal, requestId: string, cacheMode: CacheMode, deadline: OperationDeadline, agent?: AgentLabel): OperationContext;
  /**
   * Streams, as multipart/mixed (src/platform/live/multipart-subscriptions.ts), a subscription whose request accepts
   * Apollo's multipart subscriptions, or an operation using @defer or @stream whose request accepts its payloads.
   */
  streamOperation?(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    started: number,
    lookup: PrincipalLookup,
    request: StreamedOperation,
  ): Promise<void>;
}

/** An operation to stream: its resolved text, operation name and variables, and what it streams. */
export interface StreamedOperation {
  query: string;
  operationName?: string | null;
  variables?: Readonly<Record<string, unknown>> | null;
  /** A subscription's events, or (@defer, @stream) a query's or mutation's payloads. */
  kind: 'subscription' | 'incremental';
}

/** Apollo Server for HTTP: its CSRF prevention, content negotiation and plugin hooks, on the operation pipeline's stages. */
export function createApollo(pipeline: OperationPipeline, production: boolean): ApolloServer<OperationContext> {
  return new ApolloServer<OperationContext>({
    ...pipeline.apolloOptions(),
    csrfPrevention: true,
    allowBatchedHttpRequests: false,
    introspection: !production,
    // index.ts owns SIGTERM/SIGINT and drains through close(); Apollo's own handlers would stop it mid-request and
    // re-send the signal, killing the process with in-flight requests (its default outside NODE_ENV=test).
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: false,
    // The pipeline resolves hashes before Apollo sees a request, from the manifest and the shared APQ store.
    persistedQueries: false,
    // Apollo's default appends a newline to the JSON, which makes the answer a string of two parts that V8 copies
    // whole into one on its first read: a second copy of every answer.
    stringifyResult: (result) => JSON.stringify(result),
  });
}

/**
 * POST and GET /graphql: the rate limit before the body is read, persisted documents resolved, the answer cache,
 * then Apollo on the pipeline; the answer written as one Buffer.
 */
export class GraphqlHttpHandler {
  readonly answers = new AnswerCache();

  constructor(
    private readonly apollo: ApolloServer<OperationContext>,
    private readonly deps: GraphqlHttpDeps,
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const started = performance.now();
    // Resolved before the body is read: the rate limit is per principal, and a refused request costs no more. A
    // revocation heard while the body is read still stops the operation (the context checks again).
    const lookup = await this.deps.lookupPrincipal(req, res);
    const { principal } = lookup;
    if (!(await this.deps.guard.admit(req, res, principal, requestId, started))) return;
    const request: Request = { req, res, principal, requestId, started };
    const read = req.method === 'GET' ? await this.readGet(request) : req.method === 'POST' ? await this.readPost(request) : {};
    if (read === false) return;
    if (this.refusedUnvalidatable(request, read)) return;
    const streamed = this.deps.streamOperation ? this.streamedIn(read, req.headers.accept) : undefined;
    if (streamed) return this.deps.streamOperation!(req, res, requestId, started, lookup, streamed);
    await this.run(request, lookup, read);
  }

  /**
   * A document graphql-js throws on while validating it (DocumentCache) is refused here with 400, as Apollo refuses
   * an invalid one; given to Apollo it would answer 500. Any other document is checked once and left to Apollo, which
   * finds it in the shared document store.
   */
  private refusedUnvalidatable({ req, res, principal, requestId, started }: Request, read: Read): boolean {
    const { query } = fieldsOf(read);
    if (typeof query !== 'string') return false;
    const checked = this.deps.pipeline.check(query);
    if (!('unvalidatable' in checked)) return false;
    const [error] = this.deps.pipeline.clientErrors(checked.errors, undefined, requestId) ?? [];
    this.deps.guard.invalidDocument(req, res, principal, requestId, started, error!);
    return true;
  }

  /**
   * The request's operation when it is to be streamed: a subscription whose client accepts multipart subscriptions,
   * or an operation using @defer or @stream whose client accepts multipart payloads. One that does not parse or
   * validate is Apollo's to refuse.
   */
  private streamedIn(read: Read, accept: string | undefined): StreamedOperation | undefined {
    const subscriptions = acceptsMultipartSubscription(accept);
    const incremental = acceptsMultipartIncremental(accept);
    if (!subscriptions && !incremental) return undefined;
    const fields = fieldsOf(read);
    const variables = typeof fields.variables === 'string' ? jsonOrUndefined(fields.variables) : fields.variables;
    const { query, operationName } = fields;
    if (typeof query !== 'string' || (operationName != null && typeof operationName !== 'string')) return undefined;
    if (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) return undefined;
    const request = { query, operationName, variables: variables as StreamedOperation['variables'] };
    const prepared = this.deps.pipeline.prepare(query, operationName, request.variables);
    if ('errors' in prepared) return undefined;
    if (prepared.operation.operation === 'subscription') return subscriptions ? { ...request, kind: 'subscription' } : undefined;
    return incremental && asksForIncrementalDelivery(prepared.args.document) ? { ...request, kind: 'incremental' } : undefined;
  }

  private async readGet(request: Request): Promise<Read | false> {
    const params = new URLSearchParams(requestUrl(request.req).search);
    const resolved = await this.resolveDocument(request, {
      query: params.get('query') ?? undefined,
      documentId: params.get('documentId') ?? undefined,
      extensions: jsonOrUndefined(params.get('extensions')),
    });
    if (resolved === false) return false;
    return { search: `?${withDocumentParams(params, resolved)}` };
  }

  private async readPost(request: Request): Promise<Read | false> {
    const { req, res, principal, requestId, started } = request;
    let raw: Buffer;
    try {
      raw = await readBody(req, this.deps.maxBodyBytes);
    } catch (error) {
      if (error instanceof PayloadTooLargeError) {
        this.deps.guard.bodyTooLarge(req, res, principal, requestId, started, error.limitBytes);
        return false;
      }
      throw error;
    }
    const contentType = req.headers['content-type'] ?? '';
    if (!/^application\/(graphql-response\+)?json\b/i.test(contentType) && !/^application\/json/i.test(contentType)) return { body: raw.toString('utf8') };
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      this.deps.guard.notJson(req, res, principal, requestId, started);
      return false;
    }
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
      const resolved = await this.resolveDocument(request, body as DocumentRequest);
      if (resolved === false) return false;
      body = withDocument(body as Record<string, unknown>, resolved);
    }
    // Only JSON POSTs (which CSRF prevention allows) from a signed-in user. One who asked for fresh data is not
    // served a kept answer, but the fresh one replaces it, so a later request never sees older data than this one.
    if (principal.kind !== 'user') return { body };
    const answerKey = this.answers.keyFor(principal.userId, raw);
    const cached = cacheModeOf(req) === 'use' ? this.answers.get(answerKey) : undefined;
    if (cached) {
      this.sendCachedAnswer(request, cached);
      return false;
    }
    return { body, answerKey };
  }

  private async run({ req, res, requestId }: Request, lookup: PrincipalLookup, read: Read): Promise<void> {
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    let context: OperationContext | undefined;
    // The operation span is active while Apollo runs the operation, so resolver and provider spans are its
    // descendants; the operation observer names it once the operation is known.
    const deadline = operationDeadline(this.deps.operationTimeoutMs);
    const result = await traceOperation(this.deps.telemetry, 'http', requestId, () =>
      this.apollo.executeHTTPGraphQLRequest({
        httpGraphQLRequest: { method: req.method ?? 'GET', headers, search: read.search ?? requestUrl(req).search, body: read.body },
        context: async () => (context = this.deps.createContext(lookup.trusted(), requestId, cacheModeOf(req), deadline)),
      }),
    );
    for (const [name, value] of result.headers) res.setHeader(name, value);
    res.statusCode = result.status ?? 200;
    if (result.body.kind !== 'complete') {
      for await (const chunk of result.body.asyncIterator) res.write(chunk);
      res.end();
      return;
    }
    const text = withRequestIdOnAnswer(result.body.string, requestId);
    // Written as one Buffer, encoded once: a string given to the socket is joined to the response head and
    // encoded there, and for a large answer that join is a fresh copy on V8's large-object pages every time.
    const bytes = Buffer.from(text);
    if (read.answerKey && context?.answer.cacheable && res.statusCode === 200) {
      this.answers.put(read.answerKey, {
        operationName: context.answer.operationName,
        headers: [...result.headers],
        body: text === result.body.string ? bytes : Buffer.from(result.body.string),
        freshUntilMs: context.dataFreshUntilMs(),
      });
    }
    res.end(bytes);
  }

  /**
   * One query or mutation for a transport that reads its own requests (MCP): the document resolved as for HTTP
   * (persisted documents), then Apollo on the pipeline (limits, cost, masking, the operation record) for the
   * principal looked up; a refused document is recorded as a refusal and throws its GatewayError. The caller has
   * already passed the rate limit.
   */
  async execute(
    lookup: PrincipalLookup,
    requestId: string,
    request: OperationRequest,
    remoteAddress: () => string | undefined,
    agent?: AgentLabel,
  ): Promise<OperationAnswer> {
    const started = performance.now();
    const transport = agent ? 'mcp' : 'http';
    let query: string | undefined;
    try {
      query = await this.deps.pipeline.resolveDocument(request, false, principalKey(lookup.principal, remoteAddress));
    } catch (error) {
      if (error instanceof GatewayError) {
        this.deps.recorder.record({
          requestId,
          principal: describePrincipal(lookup.principal),
          transport,
          operationName: request.operationName,
          operationType: undefined,
          durationMs: performance.now() - started,
          outcome: 'refused',
          errorCodes: [error.code],
          refusal: 'persisted_documents',
        });
      }
      throw error;
    }
    const headers = new HeaderMap([['content-type', 'application/json']]);
    const deadline = operationDeadline(this.deps.operationTimeoutMs);
    // Apollo refuses an operationName or variables present but undefined, so absent ones are left out.
    const body = {
      query,
      ...(request.operationName === undefined ? {} : { operationName: request.operationName }),
      ...(request.variables === undefined ? {} : { variables: request.variables }),
    };
    const result = await traceOperation(this.deps.telemetry, transport, requestId, () =>
      this.apollo.executeHTTPGraphQLRequest({
        httpGraphQLRequest: { method: 'POST', headers, search: '', body },
        context: () => Promise.resolve(this.deps.createContext(lookup.trusted(), requestId, 'use', deadline, agent)),
      }),
    );
    if (result.body.kind !== 'complete') {
      await result.body.asyncIterator.return?.(undefined);
      return {
        status: 400,
        body: { errors: [{ message: 'Subscriptions and incremental delivery are not served here.', extensions: { code: 'BAD_USER_INPUT' } }] },
      };
    }
    return { status: result.status ?? 200, body: JSON.parse(withRequestIdOnAnswer(result.body.string, requestId)) as OperationAnswer['body'] };
  }

  /** The text to run (undefined: none given), or false when the request was refused and answered. */
  private async resolveDocument({ req, res, principal, requestId, started }: Request, document: DocumentRequest): Promise<string | undefined | false> {
    try {
      return await this.deps.pipeline.resolveDocument(
        document,
        isOwnPage(req.headers),
        principalKey(principal, () => req.socket.remoteAddress),
      );
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      this.deps.guard.documentRefused(req, res, principal, requestId, started, error);
      return false;
    }
  }

  private sendCachedAnswer({ res, principal, requestId, started }: Request, answer: CachedAnswer): void {
    for (const [name, value] of answer.headers) res.setHeader(name, value);
    res.statusCode = 200;
    res.end(answer.body);
    this.deps.metrics.answerServedFromCache();
    this.deps.recorder.record({
      requestId,
      principal: describePrincipal(principal),
      transport: 'http',
      operationName: answer.operationName,
      operationType: 'query',
      durationMs: performance.now() - started,
      outcome: 'success',
      status: 200,
      answerCache: 'hit',
    });
  }
}

/** An operation a transport of its own hands to execute: a document (text or persisted id) and its variables. */
export interface OperationRequest extends DocumentRequest {
  operationName?: string;
  variables?: Record<string, unknown>;
}

/** The GraphQL answer of execute, with Apollo's HTTP status. */
export interface OperationAnswer {
  status: number;
  body: { data?: Record<string, unknown> | null; errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[] };
}

interface Request {
  req: IncomingMessage;
  res: ServerResponse;
  principal: Principal;
  requestId: string;
  started: number;
}

/** What Apollo is given of the request: the rewritten search (GET) or body (POST), and the answer cache's key. */
interface Read {
  search?: string;
  body?: unknown;
  answerKey?: string;
}

/** The request's GraphQL parameters, from the query string (GET) or the JSON body (POST). */
function fieldsOf(read: Read): Record<string, unknown> {
  if (read.search !== undefined) return Object.fromEntries(new URLSearchParams(read.search));
  return typeof read.body === 'object' && read.body !== null ? (read.body as Record<string, unknown>) : {};
}

/** Unreadable JSON reads as absent here; Apollo, which reads the parameter again, refuses it with its own message. */
function jsonOrUndefined(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The request as Apollo should see it: the resolved text as `query`, no hash it would try to resolve again. */
function withDocument(body: Record<string, unknown>, query: string | undefined): Record<string, unknown> {
  const { documentId: _documentId, extensions, ...rest } = body;
  const { persistedQuery: _persistedQuery, ...otherExtensions } = (typeof extensions === 'object' && extensions !== null ? extensions : {}) as Record<
    string,
    unknown
  >;
  return { ...rest, ...(query === undefined ? {} : { query }), ...(Object.keys(otherExtensions).length > 0 ? { extensions: otherExtensions } : {}) };
}

function withDocumentParams(params: URLSearchParams, query: string | undefined): URLSearchParams {
  const rewritten = new URLSearchParams(params);
  rewritten.delete('documentId');
  const extensions = jsonOrUndefined(params.get('extensions'));
  if (extensions !== undefined) {
    const others = withDocument({ extensions }, undefined).extensions;
    if (others === undefined) rewritten.delete('extensions');
    else rewritten.set('extensions', JSON.stringify(others));
  }
  if (query !== undefined) rewritten.set('query', query);
  return rewritten;
}

/** `Cache-Control: no-cache` (or no-store) on a request skips the response cache for it. */
export function cacheModeOf(req: IncomingMessage): CacheMode {
  return /\bno-(cache|store)\b/i.test(req.headers['cache-control'] ?? '') ? 'bypass' : 'use';
}
