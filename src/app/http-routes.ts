import { handleAuthRoute, type AuthRoutesDeps } from '../identity';
import { CorsPolicy } from '../platform/http/cors';
import type { HttpOperationGuard } from '../platform/http/http-operation-guard';
import type { Route } from '../platform/http/http-router';
import type { HttpRequestTracker } from '../platform/http/http-request-tracker';
import type { GatewayMetrics } from '../platform/observability/gateway-metrics';
import type { Logger } from '../platform/observability/logger';
import { handleOpsRoute, type ReadinessCheck } from '../platform/observability/ops.routes';
import type { GraphqlHttpHandler } from '../platform/graphql/http-handler';
import { SSE_PATH, type SseHandler } from '../platform/live/sse.server';
import { sendJson } from '../platform/http/respond';
import { MCP_PATH, PROTECTED_RESOURCE_PATH, type McpEndpoint } from '../platform/mcp/mcp-endpoint';
import type { Playground } from '../playground/playground.routes';
import type { WebhookReceiver } from '../webhooks';

export interface RoutesDeps {
  /** CORS_ORIGINS: the browser apps that may call /graphql, its stream and /auth/. */
  corsOrigins: readonly string[];
  /** METRICS_TOKEN, when /metrics needs a bearer token. */
  metricsToken: string | undefined;
  readiness: ReadinessCheck[];
  webhooks: Pick<WebhookReceiver, 'handle'>;
  /** The sign-in routes' dependencies (/auth/). */
  auth: AuthRoutesDeps;
  playground: Playground;
  graphql: GraphqlHttpHandler;
  /** GraphQL over Server-Sent Events at /graphql/stream. */
  sse: SseHandler;
  /** MCP (Streamable HTTP, stateless) at /mcp, and its RFC 9728 metadata. */
  mcp: McpEndpoint;
  guard: HttpOperationGuard;
  tracker: HttpRequestTracker;
  metrics: GatewayMetrics;
  logger: Logger;
  publicUrl(): string;
}

/** Every HTTP route of the gateway, in the order they are tried: the platform's, then the features' own. */
export function gatewayRoutes(deps: RoutesDeps): Route[] {
  const { guard, logger } = deps;
  const corsPolicy = new CorsPolicy(deps.corsOrigins, deps.publicUrl, logger);
  // Only the routes a browser app calls; a preflight answered here never reaches Apollo's CSRF prevention.
  const cors: Route = (path, req, res, requestId) =>
    Promise.resolve((path === '/graphql' || path === SSE_PATH || path.startsWith('/auth/')) && corsPolicy.apply(path, req, res, requestId));
  const graphql: Route = async (path, req, res, requestId) => {
    if (path === SSE_PATH) await deps.sse.handle(req, res, requestId);
    else if (path === '/graphql') await deps.graphql.handle(req, res, requestId);
    else return false;
    return true;
  };
  const mcp: Route = async (path, req, res, requestId) => {
    if (path === MCP_PATH) await deps.mcp.handle(req, res, requestId);
    else if (path === PROTECTED_RESOURCE_PATH || path === `${PROTECTED_RESOURCE_PATH}${MCP_PATH}`) sendJson(res, 200, deps.mcp.resourceMetadata());
    else return false;
    return true;
  };
  const ops: Route = (path, req, res) =>
    handleOpsRoute(path, req, res, {
      metrics: deps.metrics,
      readiness: deps.readiness,
      isDraining: () => deps.tracker.isDraining,
      metricsToken: deps.metricsToken,
      logger,
    });
  const webhooks: Route = async (path, req, res, requestId) => {
    if (!path.startsWith('/webhooks/')) return false;
    if (!(await guard.admitWebhook(req, res, requestId))) return true;
    return deps.webhooks.handle(req, res, path, requestId);
  };
  const auth: Route = async (path, req, res, requestId) => {
    if (!path.startsWith('/auth/')) return false;
    if (!(await guard.admitSignIn(req, res, requestId))) return true;
    return handleAuthRoute(path, req, res, requestId, deps.auth);
  };
  return [cors, (path, req, res) => deps.playground.handle(path, req, res), graphql, mcp, ops, webhooks, auth];
}
