import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { HttpRequestTracker } from './http-request-tracker';
import { requestUrl } from './request-url';
import { sendError } from './respond';
import { INTERNAL_ERROR_MESSAGE } from '../graphql/error-masking';
import type { Logger } from '../observability/logger';
import { noteClientRequestId } from '../observability/client-request-id';
import { routeLabel } from '../observability/route-label';
import { SpanKind, SpanStatusCode, type Telemetry } from '../observability/telemetry';

/** Answers the request and resolves true when the path is its own; false leaves it to the next route. */
export type Route = (path: string, req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<boolean>;

export interface HttpRouterDeps {
  tracker: HttpRequestTracker;
  telemetry: Telemetry;
  logger: Logger;
  /** Tried in order; the composition root registers the platform's routes and the features' own. */
  routes: readonly Route[];
}

/**
 * The gateway's HTTP server: a request id on every response, the request's server span, the routes in order, a
 * 404 in the JSON error shape when none is the path's, and a 500 without detail when one fails.
 */
export function createHttpServer(deps: HttpRouterDeps): Server {
  const { tracker, telemetry, logger } = deps;
  const route = async (req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> => {
    const path = requestUrl(req).pathname;
    for (const handle of deps.routes) if (await handle(path, req, res, requestId)) return;
    sendError(res, 404, 'NOT_FOUND', `Nothing at ${path}; GraphQL is at /graphql.`, requestId);
  };
  return createServer((req, res) => {
    // Counts the request for /metrics and for draining; during a shutdown it answers 503 itself.
    if (!tracker.begin(req, res)) return;
    // Always the gateway's own: a client's X-Request-Id is only logged beside it (client-request-id.ts).
    const requestId = randomUUID();
    res.setHeader('x-request-id', requestId);
    noteClientRequestId(requestId, req.headers['x-request-id'], res);
    const routed = telemetry.enabled ? traceRequest(telemetry, req, res, requestId, () => route(req, res, requestId)) : route(req, res, requestId);
    void routed.catch((error: unknown) => {
      logger.error({ err: error, requestId, url: req.url }, 'request failed');
      if (!res.headersSent) sendError(res, 500, 'INTERNAL_SERVER_ERROR', INTERNAL_ERROR_MESSAGE, requestId);
      else res.destroy();
    });
  });
}

/** The request's server span, child of the caller's `traceparent` when it sent one; it ends when the response does. */
function traceRequest(telemetry: Telemetry, req: IncomingMessage, res: ServerResponse, requestId: string, handle: () => Promise<void>): Promise<void> {
  const route = routeLabel(req.url);
  return telemetry.span(
    `${req.method ?? 'OTHER'} ${route}`,
    {
      kind: SpanKind.SERVER,
      parent: telemetry.extract(req.headers),
      attributes: { 'http.request.method': req.method ?? 'OTHER', 'http.route': route, 'bankgraph.request_id': requestId },
    },
    async (span) => {
      await handle();
      span?.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span?.setStatus({ code: SpanStatusCode.ERROR });
    },
  );
}
