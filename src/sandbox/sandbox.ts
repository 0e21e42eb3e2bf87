import { randomBytes } from 'node:crypto';
import { createServer, ServerResponse, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SandboxClock } from './clock';
import type { SandboxClient, SandboxContext, SandboxRoutes } from './context';
import { registerControlRoutes } from './control/control.routes';
import { FaultInjector, type FaultSpec } from './faults';
import { generatePayments } from './fixtures/payments';
import { generateUsers } from './fixtures/users';
import type { FixtureSizes } from './fixtures/types';
import { BodyTooLargeError, MalformedBodyError, readBody, toSandboxRequest, type SandboxRequest } from './http/request';
import { OAuthStyleError, Problem, sendJson, sendOAuthStyleError, sendProblem } from './http/respond';
import { Router } from './http/router';
import { Ledger } from './ledger';
import { RequestLog } from './request-log';
import { generateSigningKey, publicKeyFromPem, toJwk } from './signing';
import { AccessTokens } from './tokens';
import { WebhookSender } from './webhooks';
import { registerAuthRoutes } from './auth/auth.routes';
import { registerVerificationRoutes } from './verification/verification.routes';
import { registerDataRoutes } from './data/data.routes';
import { registerWithdrawalRoutes } from './payouts/withdrawal.routes';
import { registerRefundRoutes } from './payments/refund.routes';
import { isClientHangUp, jsonLineLog, type SandboxLog } from './log';

export interface SandboxOptions {
  /** 0 picks a free port (tests). */
  port?: number;
  host?: string;
  /** Added to every provider route, to make round trips visible. */
  latencyMs?: number;
  /** Sandbox seconds per real second. */
  timeScale?: number;
  clientId?: string;
  /** Generated when omitted, and printed by `npm run sandbox`. */
  clientSecret?: string;
  redirectUris?: string[];
  /** Request-signing public keys the client registered. */
  signingKeys?: { kid: string; publicKeyPem: string }[];
  paymentsWebhookUrl?: string;
  fixtures?: FixtureSizes;
  webhookRetryDelaysMs?: number[];
  /** JSON lines on stdout when omitted. */
  log?: SandboxLog;
}

export interface Sandbox {
  /** e.g. http://127.0.0.1:4010: {auth_url}, {verification_url}, {payout_url}, {base_url} and {data_url} alike. */
  url: string;
  context: SandboxContext;
  close(): Promise<void>;
}

export const DEFAULT_CLIENT_ID = 'bankgraph-sandbox';
export const DEFAULT_REDIRECT_URIS = ['http://localhost/auth/callback', 'http://127.0.0.1/auth/callback', 'http://[::1]/auth/callback'];
const WEBHOOK_KEY_ID = 'sandbox-webhooks-1';

export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const log = options.log ?? jsonLineLog();
  const clock = new SandboxClock(options.timeScale ?? 1, new Date(), log);
  const webhookKey = generateSigningKey();
  let origin = '';
  const client: SandboxClient = {
    clientId: options.clientId ?? DEFAULT_CLIENT_ID,
    clientSecret: options.clientSecret ?? randomBytes(24).toString('base64url'),
    redirectUris: options.redirectUris ?? DEFAULT_REDIRECT_URIS,
    signingKeys: new Map((options.signingKeys ?? []).map(({ kid, publicKeyPem }) => [kid, publicKeyFromPem(publicKeyPem)])),
    paymentsWebhookUrl: options.paymentsWebhookUrl,
  };
  const context: SandboxContext = {
    clock,
    tokens: new AccessTokens(clock),
    client,
    fixtures: { users: generateUsers(options.fixtures ?? {}), payments: generatePayments() },
    webhooks: new WebhookSender({ kid: WEBHOOK_KEY_ID, privateKey: webhookKey.privateKey }, () => `${origin}/.well-known/jwks`, options.webhookRetryDelaysMs),
    ledger: new Ledger(),
    origin: () => origin,
  };

  const routes: SandboxRoutes = { provider: new Router(), control: new Router() };
  const faults = new FaultInjector();
  const requestLog = new RequestLog();
  routes.provider.add('GET', '/.well-known/jwks', (_req, res) => sendJson(res, 200, { keys: [toJwk(webhookKey.publicKey, WEBHOOK_KEY_ID)] }));
  for (const register of [registerAuthRoutes, registerVerificationRoutes, registerDataRoutes, registerWithdrawalRoutes, registerRefundRoutes]) {
    register(routes, context);
  }
  registerControlRoutes(routes, context, faults, requestLog);

  const latencyMs = options.latencyMs ?? 0;
  const server = createServer((message, res) => {
    void handle(message, res).catch((error: unknown) => {
      if (isClientHangUp(error, message.destroyed)) {
        res.destroy();
        return;
      }
      // Handlers turn expected failures into provider errors; reaching here is a sandbox bug, so say so loudly.
      log.error('unhandled error', { method: message.method, path: message.url?.split('?')[0], err: error });
      if (!res.headersSent) sendProblem(res, new Problem(500, 'internal-server-error', 'The sandbox failed unexpectedly.'));
      else res.destroy();
    });
  });

  async function handle(message: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(message.url ?? '/', 'http://sandbox').pathname;
    if (path.startsWith('/sandbox/')) return dispatch(routes.control, message, res, 'oauth');
    const family = errorFamily(path);
    const entry = requestLog.start(message.method ?? 'GET', path, new URL(message.url ?? '/', 'http://sandbox').searchParams);
    res.on('finish', () => requestLog.finish(entry, res.statusCode));
    const fault = faults.take(message.method ?? 'GET', path);
    const delay = latencyMs + (fault?.latencyMs ?? 0);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    if (fault && !fault.afterProcessing && applyFault(fault, message, res, family)) return;
    if (fault?.afterProcessing) {
      // The provider does the work; the client never hears the answer.
      await dispatch(routes.provider, message, new ServerResponse(message), family);
      if (applyFault(fault, message, res, family)) return;
    }
    return dispatch(routes.provider, message, res, family);
  }

  async function dispatch(router: Router, message: IncomingMessage, res: ServerResponse, family: ErrorFamily): Promise<void> {
    let req: SandboxRequest | undefined;
    try {
      const rawBody = await readBody(message);
      req = toSandboxRequest(message, rawBody, origin);
      const found = router.match(req.method, req.path);
      if (found === undefined) throw notFound(family, `no ${req.method} route at ${req.path}`);
      if (found === 'method-not-allowed') throw methodNotAllowed(family, `${req.method} is not allowed at ${req.path}`);
      req.params = found.params;
      await found.handler(req, res);
    } catch (error) {
      if (res.headersSent) throw error;
      if (error instanceof Problem) return sendProblem(res, error);
      if (error instanceof OAuthStyleError) return sendOAuthStyleError(res, error);
      if (error instanceof BodyTooLargeError) {
        if (family === 'problem') return sendProblem(res, new Problem(413, 'payload-too-large', error.message));
        return sendOAuthStyleError(res, new OAuthStyleError(413, 'invalid_request', error.message));
      }
      if (error instanceof MalformedBodyError) {
        if (family === 'problem') return sendProblem(res, new Problem(400, 'invalid-parameters', error.message));
        return sendOAuthStyleError(res, new OAuthStyleError(400, 'invalid_request', error.message));
      }
      throw error;
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  origin = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;

  return {
    url: origin,
    context,
    async close() {
      clock.stop();
      context.webhooks.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type ErrorFamily = 'problem' | 'oauth';

/** The token endpoint and the data API speak `{error, error_description}`; the v1 and v3 APIs speak problem+json. */
function errorFamily(path: string): ErrorFamily {
  return path.startsWith('/connect/') || path.startsWith('/data/') ? 'oauth' : 'problem';
}

function notFound(family: ErrorFamily, detail: string): Error {
  return family === 'problem' ? new Problem(404, 'not-found', detail) : new OAuthStyleError(404, 'not_found', detail);
}

function methodNotAllowed(family: ErrorFamily, detail: string): Error {
  return family === 'problem' ? new Problem(405, 'method-not-allowed', detail) : new OAuthStyleError(405, 'method_not_allowed', detail);
}

/** Returns true when the fault answered (or dropped) the request. */
function applyFault(fault: FaultSpec, message: IncomingMessage, res: ServerResponse, family: ErrorFamily): boolean {
  if (fault.reset) {
    message.socket.destroy();
    return true;
  }
  if (fault.malformed) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"results": [{"account_id": ');
    return true;
  }
  if (fault.body !== undefined) {
    res.writeHead(fault.status ?? 200, {
      'content-type': 'application/json',
      ...(fault.retryAfter === undefined ? {} : { 'retry-after': String(fault.retryAfter) }),
    });
    res.end(JSON.stringify(fault.body));
    return true;
  }
  if (fault.status === undefined) return false;
  const headers: Record<string, string> = fault.retryAfter === undefined ? {} : { 'retry-after': String(fault.retryAfter) };
  const detail = `injected fault: ${fault.status}`;
  if (family === 'problem') {
    const slug = fault.status === 429 ? 'rate-limit-exceeded' : fault.status === 503 ? 'service-unavailable' : 'internal-server-error';
    sendProblem(res, new Problem(fault.status, slug, detail, undefined, headers));
  } else {
    const error = fault.status === 429 ? 'rate_limit_exceeded' : fault.status === 503 ? 'service_unavailable' : 'internal_error';
    sendOAuthStyleError(res, new OAuthStyleError(fault.status, error, detail, headers));
  }
  return true;
}
