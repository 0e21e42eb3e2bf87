import { handleAuthRoute } from '../identity';
import type { ResolvedConfig } from '../platform/config/config';
import { CorsPolicy } from '../platform/http/cors';
import type { HttpOperationGuard } from '../platform/http/http-operation-guard';
import type { Route } from '../platform/http/http-router';
import type { HttpRequestTracker } from '../platform/http/http-request-tracker';
import type { GatewayMetrics } from '../platform/observability/gateway-metrics';
import type { Logger } from '../platform/observability/logger';
import { handleOpsRoute } from '../platform/observability/ops.routes';
import type { GraphqlHttpHandler } from '../platform/graphql/http-handler';
import { SSE_PATH, type SseHandler } from '../platform/live/sse.server';
import { sendJson } from '../platform/http/respond';
import { MCP_PATH, PROTECTED_RESOURCE_PATH, type McpEndpoint } from '../platform/mcp/mcp-endpoint';
import type { Playground } from '../playground/playground.routes';
import type { Services } from './services';

export interface RoutesDeps {
  config: ResolvedConfig;
  services: Services;
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
  const { config, services, guard, logger } = deps;
  const corsPolicy = new CorsPolicy(config.server.corsOrigins, deps.publicUrl, logger);
  const appOrigins: ReadonlySet<string> = new Set(config.server.corsOrigins);
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
      readiness: services.readiness,
      isDraining: () => deps.tracker.isDraining,
      metricsToken: config.observability.metricsToken,
      logger,
    });
  const webhooks: Route = async (path, req, res, requestId) => {
    if (!path.startsWith('/webhooks/')) return false;
    if (!(await guard.admitWebhook(req, res, requestId))) return true;
    return services.live.webhooks.handle(req, res, path, requestId);
  };
  const auth: Route = async (path, req, res, requestId) => {
    if (!path.startsWith('/auth/')) return false;
    if (!(await guard.admitSignIn(req, res, requestId))) return true;
    return handleAuthRoute(path, req, res, requestId, {
      authUrl: config.provider.authUrl,
      clientId: config.provider.clientId,
      publicUrl: deps.publicUrl,
      production: config.server.nodeEnv === 'production',
      appOrigins,
      loginStates: services.loginStates,
      sessions: services.sessions,
      connections: services.connections,
      principals: services.principals,
      identity: services.identity,
      auth: services.auth,
      data: services.data,
      logger,
    });
  };
  return [cors, (path, req, res) => deps.playground.handle(path, req, res), graphql, mcp, ops, webhooks, auth];
}
