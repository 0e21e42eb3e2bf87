import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHandler, type Request as SseRequest } from 'graphql-sse';
import type { ExecutionResult as SseResult, RequestParams } from 'graphql-sse';
import type { PrincipalLookup } from '../graphql/http-handler';
import { withRequestIdOnAnswer } from '../graphql/operation-errors';
import { sendGraphQLRefusal } from '../graphql/refusals';
import { PayloadTooLargeError, readBody } from '../http/body';
import type { HttpOperationGuard } from '../http/http-operation-guard';
import { DirectWrites, writeChunk, type HttpStreams, type StreamedResult } from './http-streams';

/** The path of GraphQL over Server-Sent Events. */
export const SSE_PATH = '/graphql/stream';

export interface SseDeps {
  streams: HttpStreams;
  /** The HTTP path's rate limit and refusals (429, 413, unreadable JSON). */
  guard: HttpOperationGuard;
  maxBodyBytes: number;
  /** The HTTP path's principal lookup: bearer token, merchant key or session cookie. */
  lookupPrincipal(req: IncomingMessage, res: ServerResponse): Promise<PrincipalLookup>;
}

/** What one request carries through graphql-sse's hooks. */
interface SseContext {
  res: ServerResponse;
  requestId: string;
  started: number;
  lookup: PrincipalLookup;
  /** The GraphQL-over-HTTP persisted document id, which graphql-sse's parameters leave out. */
  documentId: unknown;
  direct: DirectWrites;
}

const NEXT_EVENT = 'event: next\n';

/** graphql-sse's `next` event in distinct connections mode, given the result's JSON: what its print() writes. */
function nextEvent(json: string): string {
  return `${NEXT_EVENT}data: ${json}\n\n`;
}

/**
 * GraphQL over Server-Sent Events (the graphql-sse protocol, "distinct connections" mode: one stream per operation)
 * at /graphql/stream, GET or POST with `Accept: text/event-stream`. graphql-sse reads the request and writes the
 * protocol's `next` and `complete` events; what runs, and under which rules, is HttpStreams' (the WebSocket's
 * rules). A comment line every STREAM_HEARTBEAT_MS keeps idle proxies from closing the stream.
 */
export class SseHandler {
  private readonly handler = createHandler<IncomingMessage, SseContext>({
    // No stream tokens: only the distinct connections mode, whose streams need no state between requests.
    authenticate: () => null,
    // Results leave formatted (masked, request ids), which graphql-sse only serialises.
    onSubscribe: (req, params) => this.subscribe(req, params) as AsyncGenerator<unknown> as AsyncGenerator<SseResult>,
  });

  constructor(private readonly deps: SseDeps) {}

  async handle(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const started = performance.now();
    if (!/\btext\/event-stream\b/i.test(req.headers.accept ?? '') || (req.method !== 'GET' && req.method !== 'POST')) {
      const message = `${SSE_PATH} serves GraphQL over Server-Sent Events: GET or POST with Accept: text/event-stream (the graphql-sse protocol, distinct connections). Queries and mutations are also served at /graphql.`;
      sendGraphQLRefusal(req, res, req.method === 'GET' || req.method === 'POST' ? 406 : 405, { message, extensions: { code: 'BAD_USER_INPUT' } }, requestId);
      return;
    }
    if (this.deps.streams.refuseForeignOrigin(req, res, requestId)) return;
    const lookup = await this.deps.lookupPrincipal(req, res);
    if (!(await this.deps.guard.admit(req, res, lookup.principal, requestId, started))) return;
    const body = req.method === 'POST' ? await this.readJson(req, res, lookup, requestId, started) : null;
    if (body === false) return;
    const request = graphqlSseRequest(req, body);
    if (request === undefined) {
      sendGraphQLRefusal(req, res, 400, { message: MISSING_QUERY_MESSAGE, extensions: { code: 'BAD_USER_INPUT', reason: 'BAD_REQUEST' } }, requestId);
      return;
    }
    const { url, params, documentId } = request;
    const direct = new DirectWrites(res, nextEvent);
    const [answer, init] = await this.handler({
      method: req.method,
      url,
      headers: {
        // graphql-sse compares Accept whole; a browser's EventSource may list more than the one type.
        get: (key) => (key === 'accept' ? 'text/event-stream' : headerValue(req, key)),
      },
      body: params,
      raw: req,
      context: { res, requestId, started, lookup, documentId, direct },
    });
    res.writeHead(init.status, init.statusText, init.headers);
    if (answer === null || typeof answer === 'string') {
      // graphql-sse's own refusals (a query that is not a string, a body it cannot read) carry a code and the request id, as every other error does.
      res.end(answer === null ? undefined : withRequestIdOnAnswer(answer, requestId, 'BAD_USER_INPUT'));
      return;
    }
    await this.write(res, answer, direct);
  }

  /** The protocol's events as they come, and a heartbeat comment between them. */
  private async write(res: ServerResponse, events: AsyncGenerator<string, void, undefined>, direct: DirectWrites): Promise<void> {
    const heartbeat = setInterval(() => res.writable && res.write(':\n\n'), this.deps.streams.heartbeatMs);
    const stop = (): void => void events.return(undefined);
    res.once('close', stop);
    try {
      for await (const event of events) {
        if (!res.writable) break;
        const written = writeChunk(res, event);
        // Each result is one `next` event; the rest are comments and the closing `complete`.
        if (event.startsWith(NEXT_EVENT)) direct.wrote();
        await written;
      }
    } finally {
      clearInterval(heartbeat);
      res.off('close', stop);
      res.end();
    }
  }

  private async readJson(
    req: IncomingMessage,
    res: ServerResponse,
    lookup: PrincipalLookup,
    requestId: string,
    started: number,
  ): Promise<Record<string, unknown> | null | false> {
    let raw: Buffer;
    try {
      raw = await readBody(req, this.deps.maxBodyBytes);
    } catch (error) {
      if (!(error instanceof PayloadTooLargeError)) throw error;
      this.deps.guard.bodyTooLarge(req, res, lookup.principal, requestId, started, error.limitBytes);
      return false;
    }
    // graphql-sse answers a body that is not JSON with 415 itself.
    if (!/application\/json/i.test(req.headers['content-type'] ?? '')) return null;
    try {
      const parsed = JSON.parse(raw.toString('utf8')) as unknown;
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // Answered below.
    }
    this.deps.guard.notJson(req, res, lookup.principal, requestId, started);
    return false;
  }

  private subscribe(req: SseRequest<IncomingMessage, SseContext>, params: RequestParams): AsyncGenerator<StreamedResult> {
    const { res, requestId, started, lookup, documentId, direct } = req.context;
    return this.deps.streams.run({
      req: req.raw,
      res,
      requestId,
      started,
      transport: 'sse',
      lookup,
      document: { query: params.query, documentId, extensions: params.extensions },
      operationName: params.operationName,
      variables: params.variables,
      mutationsAllowed: req.method === 'POST',
      direct,
    });
  }
}

/** Said (400) to a request naming no operation at all. */
export const MISSING_QUERY_MESSAGE =
  'No operation: send its text as `query`, or name a persisted document with `documentId` (or an APQ hash in `extensions.persistedQuery`).';

/**
 * The request as graphql-sse is to read it. graphql-sse asks every request for a `query`: one naming a persisted
 * document by `documentId` or an APQ hash alone (as GraphQL over HTTP sends it) is given an empty one, which the
 * persisted-documents stage replaces. Undefined when the request names no operation at all.
 */
function graphqlSseRequest(
  req: IncomingMessage,
  body: Record<string, unknown> | null,
): { url: string; params: Record<string, unknown> | null; documentId: unknown } | undefined {
  const url = req.url ?? SSE_PATH;
  if (req.method === 'POST') {
    // A body graphql-sse cannot read (not JSON) is its own to refuse.
    if (body === null || body.query !== undefined) return { url, params: body, documentId: body?.documentId };
    if (body.documentId === undefined && body.extensions === undefined) return undefined;
    return { url, params: { ...body, query: '' }, documentId: body.documentId };
  }
  const search = new URLSearchParams(url.split('?')[1] ?? '');
  const documentId = search.get('documentId');
  if (search.has('query')) return { url, params: null, documentId };
  if (documentId === null && !search.has('extensions')) return undefined;
  search.set('query', '');
  return { url: `${SSE_PATH}?${search}`, params: null, documentId };
}

function headerValue(req: IncomingMessage, key: string): string | undefined {
  const value = req.headers[key];
  return Array.isArray(value) ? value.join(', ') : value;
}
