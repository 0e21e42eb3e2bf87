import { timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson, sendText } from '../http/respond';
import type { Logger } from './logger';
import type { GatewayMetrics } from './gateway-metrics';

/**
 * One dependency /readyz asks. A `required` one the gateway cannot answer correctly without (the store; the pubsub
 * that carries events and revocations between instances): failing, the instance is not ready. Any other (the
 * cache) only shows as degraded, since the gateway works around its outage.
 */
export interface ReadinessCheck {
  /** What the answer names, e.g. `pubsub (PUBSUB_URL)`: the dependency and its setting, never an address. */
  name: string;
  required: boolean;
  check(): Promise<void>;
  /** How long it may take before it counts as down; READINESS_TIMEOUT_MS unless given. */
  timeoutMs?: number;
}

/** A dependency that has not answered by then counts as down: a probe must get its answer before its own timeout. */
export const READINESS_TIMEOUT_MS = 2_000;

export interface OpsRoutesDeps {
  metrics: GatewayMetrics;
  readiness: readonly ReadinessCheck[];
  isDraining(): boolean;
  metricsToken: string | undefined;
  logger: Logger;
}

/** /healthz (the process answers), /readyz (it can serve: required dependencies reachable, not shutting down), /metrics. */
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
    const down = await unreachable(deps.readiness, deps.logger);
    const required = down.filter((check) => check.required).map((check) => check.name);
    if (required.length > 0) sendJson(res, 503, { status: 'unavailable', reason: `not reachable: ${required.join(', ')}` });
    else sendJson(res, 200, down.length === 0 ? { status: 'ready' } : { status: 'ready', degraded: down.map((check) => check.name) });
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

/** The checks that failed or did not answer within READINESS_TIMEOUT_MS, each logged with its error. */
async function unreachable(checks: readonly ReadinessCheck[], logger: Logger): Promise<ReadinessCheck[]> {
  const outcomes = await Promise.all(
    checks.map(async (check) => {
      let timer: NodeJS.Timeout | undefined;
      const timeoutMs = check.timeoutMs ?? READINESS_TIMEOUT_MS;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        await Promise.race([check.check(), timeout]);
        return undefined;
      } catch (error) {
        logger.warn({ err: error, dependency: check.name }, check.required ? 'not ready' : 'ready, degraded');
        return check;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return outcomes.filter((check) => check !== undefined);
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? '';
  // Digests of equal length, so the comparison time says nothing about the token.
  return timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(token).digest());
}
