import { timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson, sendText } from '../http/respond';
import type { Logger } from './logger';
import type { GatewayMetrics } from './gateway-metrics';

export interface OpsRoutesDeps {
  metrics: GatewayMetrics;
  /** Resolves when every dependency answers (store, cache and — once it exists — pubsub); see Services.checkReady. */
  checkReady(): Promise<void>;
  isDraining(): boolean;
  metricsToken: string | undefined;
  logger: Logger;
}

/** /healthz (the process answers), /readyz (it can serve: dependencies reachable, not shutting down), /metrics. */
export async function handleOpsRoute(path: string, req: IncomingMessage, res: ServerResponse, deps: OpsRoutesDeps): Promise<boolean> {
  if (path === '/healthz') {
    sendJson(res, 200, { status: 'ok' });
    return true;
  }
  if (path === '/readyz') {
    // A load balancer must stop routing here as soon as a shutdown starts, before the listener closes.
    if (deps.isDraining()) {
      sendJson(res, 503, { status: 'unavailable', reason: 'shutting down' });
      return true;
    }
    try {
      await deps.checkReady();
      sendJson(res, 200, { status: 'ready' });
    } catch (error) {
      deps.logger.warn({ err: error }, 'not ready');
      sendJson(res, 503, { status: 'unavailable', reason: 'a dependency (store, cache or pubsub) is not reachable' });
    }
    return true;
  }
  if (path === '/metrics') {
    if (deps.metricsToken !== undefined && !bearerMatches(req.headers.authorization, deps.metricsToken)) {
      sendJson(
        res,
        401,
        { error: { code: 'UNAUTHENTICATED', message: 'GET /metrics needs "Authorization: Bearer <METRICS_TOKEN>".' } },
        { 'www-authenticate': 'Bearer' },
      );
      return true;
    }
    sendText(res, 200, await deps.metrics.render(), deps.metrics.contentType, { 'cache-control': 'no-store' });
    return true;
  }
  return false;
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? '';
  // Digests of equal length, so the comparison time says nothing about the token.
  return timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(token).digest());
}
