import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphQLFormattedError } from 'graphql';
import type { Principal } from '../access/principal';
import { describePrincipal } from '../graphql/operation-context';
import { PersistedQueryNotFoundError, PersistedQueryNotSupportedError, type GatewayError } from '../errors/gateway-errors';
import { sendError } from './respond';
import type { OperationRecorder } from '../observability/operation-recorder';
import type { Transport } from '../observability/gateway-metrics';
import { operationLimitError } from '../graphql/operation-limits';
import { principalKey } from './principal-key';
import type { RateLimiter } from './rate-limiter';
import { formattedRefusal, rateLimitedError, sendGraphQLRefusal } from '../graphql/refusals';

/**
 * The HTTP refusals that happen before Apollo sees a request: over the rate limit (429 + Retry-After), body too
 * large (413), body not JSON (400). Each answers in the GraphQL error shape and is logged as one operation.
 */
export class HttpOperationGuard {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly recorder: OperationRecorder,
    /** Webhook deliveries' own allowance per source address (WEBHOOK_RATE_LIMIT_*). */
    private readonly webhookLimiter: RateLimiter,
  ) {}

  /** Spends one token of the principal's allowance; false (and the 429 sent) when there is none left. */
  async admit(
    req: IncomingMessage,
    res: ServerResponse,
    principal: Principal,
    requestId: string,
    started: number,
    transport: Extract<Transport, 'http' | 'mcp'> = 'http',
  ): Promise<boolean> {
    const decision = await this.limiter.admit(principalKey(principal, () => req.socket.remoteAddress));
    if (decision.allowed) return true;
    const error = rateLimitedError(decision.retryAfterSeconds);
    sendGraphQLRefusal(req, res, 429, formattedRefusal(error), requestId, { 'retry-after': String(decision.retryAfterSeconds) });
    this.recordUnexecuted(principal, requestId, started, 429, 'FORBIDDEN', 'rate_limit', transport);
    return false;
  }

  /**
   * The sign-in routes have an allowance per client address of their own (each /auth/login stores a login state,
   * so a flood would fill the store): past it, 429 in those routes' error shape.
   */
  async admitSignIn(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<boolean> {
    const decision = await this.limiter.admit(`sign-in:${principalKey({ kind: 'anonymous' }, () => req.socket.remoteAddress)}`);
    if (decision.allowed) return true;
    sendError(res, 429, 'FORBIDDEN', `Too many requests from this client; retry after ${decision.retryAfterSeconds} s.`, requestId, {
      'retry-after': String(decision.retryAfterSeconds),
    });
    return false;
  }

  /**
   * Webhook deliveries, per source address, before anything else is done with them: checking a signature costs an
   * ES512 verification (and may fetch the provider's keys), which anyone could otherwise make the gateway do at will.
   */
  async admitWebhook(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<boolean> {
    const decision = await this.webhookLimiter.admit(`webhook:${principalKey({ kind: 'anonymous' }, () => req.socket.remoteAddress)}`);
    if (decision.allowed) return true;
    sendError(res, 429, 'FORBIDDEN', `Too many webhook deliveries from this address; retry after ${decision.retryAfterSeconds} s.`, requestId, {
      'retry-after': String(decision.retryAfterSeconds),
    });
    return false;
  }

  bodyTooLarge(req: IncomingMessage, res: ServerResponse, principal: Principal, requestId: string, started: number, limitBytes: number): void {
    const error = operationLimitError('maxBodyBytes', `The request body exceeds ${limitBytes} bytes.`, limitBytes, 413);
    sendGraphQLRefusal(req, res, 413, formattedRefusal(error), requestId, { connection: 'close' });
    this.recordUnexecuted(principal, requestId, started, 413, 'BAD_USER_INPUT', 'maxBodyBytes');
  }

  notJson(req: IncomingMessage, res: ServerResponse, principal: Principal, requestId: string, started: number): void {
    sendGraphQLRefusal(
      req,
      res,
      400,
      { message: 'The request body is not valid JSON.', extensions: { code: 'BAD_USER_INPUT', reason: 'BAD_REQUEST' } },
      requestId,
    );
    this.recordUnexecuted(principal, requestId, started, 400, 'BAD_USER_INPUT');
  }

  /** A document refused before Apollo sees it because it cannot be validated (GraphqlHttpHandler). */
  invalidDocument(req: IncomingMessage, res: ServerResponse, principal: Principal, requestId: string, started: number, error: GraphQLFormattedError): void {
    sendGraphQLRefusal(req, res, 400, error, requestId);
    this.recordUnexecuted(principal, requestId, started, 400, String(error.extensions?.code ?? 'BAD_USER_INPUT'));
  }

  /**
   * A persisted-document refusal (src/platform/graphql/persisted/). NOT_FOUND and NOT_SUPPORTED answer 200 and must not be cached, as
   * Apollo Server answers them, because APQ clients react to them by resending; the others are the client's error.
   */
  documentRefused(req: IncomingMessage, res: ServerResponse, principal: Principal, requestId: string, started: number, error: GatewayError): void {
    const resend = error instanceof PersistedQueryNotFoundError || error instanceof PersistedQueryNotSupportedError;
    const status = resend ? 200 : 400;
    sendGraphQLRefusal(
      req,
      res,
      status,
      { message: error.message, extensions: { ...error.extensions } },
      requestId,
      resend ? { 'cache-control': 'private, no-cache, must-revalidate' } : {},
    );
    // A resend request is part of the APQ protocol, not a refusal.
    this.recordUnexecuted(principal, requestId, started, status, error.code, resend ? undefined : 'persisted_documents');
  }

  /** An HTTP request answered before anything ran: refused by a limit (`refusal` names it), or a client error. */
  private recordUnexecuted(
    principal: Principal,
    requestId: string,
    started: number,
    status: number,
    code: string,
    refusal?: string,
    transport: Transport = 'http',
  ): void {
    this.recorder.record({
      requestId,
      principal: describePrincipal(principal),
      transport,
      operationName: undefined,
      operationType: undefined,
      durationMs: performance.now() - started,
      status,
      outcome: refusal === undefined ? 'error' : 'refused',
      errorCodes: [code],
      ...(refusal === undefined ? {} : { refusal }),
    });
  }
}
