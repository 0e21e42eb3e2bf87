import { BrokenCircuitError } from 'cockatiel';
import {
  BadUserInputError,
  type GatewayError,
  IdempotencyConflictError,
  NotFoundError,
  PaymentNotRefundableError,
  RefundExceedsPaymentError,
  UnauthenticatedError,
  UpstreamError,
  UpstreamRateLimitedError,
  UpstreamUnavailableError,
} from '../errors/gateway-errors';

/*
 * Upstream-error mapping: the one place that turns a provider answer (or the lack of one) into a GatewayError.
 * Messages are the gateway's own words for the app's developer and never quote the provider, whose text can hold
 * credentials or internal addresses; clients get the provider's error slug as `extensions.providerError`. The
 * provider's body travels only on `originalError` (non-enumerable, so it reaches logs, never responses).
 */

/** A provider answer as the HTTP client saw it; `body` is the parsed JSON, or the raw text when it was not JSON. */
export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

export interface UpstreamErrorContext {
  /** The call, as named in metrics and logs, e.g. `payments.createRefund`. */
  route: string;
  /** The call went to the token endpoint: its 400s are the gateway's own mistakes, never the user's input. */
  tokenEndpoint?: boolean;
  /** What a 404 could not find, in words: `payment`, `refund`, `withdrawal`, `account`, `card`, `data task`. */
  resource?: string;
  /** Provider field names mapped to the GraphQL input paths they came from, so BAD_USER_INPUT can name the field. */
  fields?: Readonly<Record<string, string>>;
  /** Values that must never appear in a message (tokens, codes, the client secret) even if the provider echoes them. */
  secrets?: readonly string[];
  /** Why no response arrived (connection error, timeout); set only when `response` is undefined. */
  cause?: unknown;
  requestId?: string;
}

/** What the logs get: everything the provider said. Its message names the call and status, nothing the provider wrote. */
export class ProviderResponseError extends Error {
  override readonly name = 'ProviderResponseError';

  constructor(
    readonly route: string,
    readonly status: number | undefined,
    readonly body: unknown,
    readonly traceId: string | undefined,
    readonly requestId: string | undefined,
    cause?: unknown,
  ) {
    super(
      status === undefined ? `provider call ${route} got no response` : `provider call ${route} answered HTTP ${status}`,
      cause === undefined ? undefined : { cause },
    );
  }
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT', 'OPERATION_DEADLINE']);

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The problem+json slug (`refund-limit-exceeded`) or the data/OAuth `error` code (`account_not_found`). */
function upstreamErrorKind(body: unknown): string | undefined {
  const record = asRecord(body);
  if (!record) return undefined;
  // `type` is `https://docs.truelayer.com/docs/error-types#<slug>`; the slug is what identifies the error.
  if (typeof record.type === 'string') return record.type.slice(record.type.lastIndexOf('#') + 1);
  return typeof record.error === 'string' ? record.error : undefined;
}

function headerOf(headers: UpstreamResponse['headers'], name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === lower) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

/** Retry-After as whole seconds from now: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfterSeconds(headers: UpstreamResponse['headers'], now: number = Date.now()): number | undefined {
  const raw = headerOf(headers, 'retry-after')?.trim();
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * The GraphQL input paths behind a provider's field errors: only names the caller mapped, because anything else is
 * the provider's text, and that goes to the log, never to the client.
 */
function rejectedFields(body: unknown, context: UpstreamErrorContext): string[] {
  const fieldErrors = asRecord(asRecord(body)?.errors);
  if (!fieldErrors) return [];
  return Object.keys(fieldErrors).flatMap((name) => {
    const mapped = context.fields?.[name];
    return mapped === undefined ? [] : [mapped];
  });
}

/** The body for logs stays verbatim except for the caller's known secrets, which logs must not hold either. */
function withoutSecrets(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') {
    return secrets.reduce((text, secret) => (secret.length >= 4 ? text.split(secret).join('[redacted]') : text), value);
  }
  if (Array.isArray(value)) return value.map((item) => withoutSecrets(item, secrets));
  const record = asRecord(value);
  if (!record) return value;
  return Object.fromEntries(Object.entries(record).map(([key, item]) => [withoutSecrets(key, secrets), withoutSecrets(item, secrets)]));
}

/**
 * The error identifiers an app may see as `extensions.providerError`: the problem types of the payments, payouts
 * and verification APIs, the data API's codes and OAuth's (RFC 6749 §5.2, RFC 6750 §3.1), as the provider
 * interface (docs/provider-choices.md) and its sandbox use them. Anything else the provider sends, however
 * slug-shaped, is not shown: a body can carry any text in `type` or `error`, and the log has it.
 */
const PROVIDER_ERROR_SLUGS: ReadonlySet<string> = new Set([
  // problem+json types (https://docs.truelayer.com/docs/error-types#<slug>)
  'invalid-parameters',
  'invalid-signature',
  'forbidden',
  'unauthenticated',
  'not-found',
  'method-not-allowed',
  'payload-too-large',
  'payment-not-refundable',
  'refund-limit-exceeded',
  'idempotency-key-reuse',
  'idempotency-key-concurrency-conflict',
  'rate-limit-exceeded',
  'internal-server-error',
  'service-unavailable',
  // the data API's `error`
  'account_not_found',
  'card_not_found',
  'task_not_found',
  'task_not_ready',
  'invalid_date_range',
  'insufficient_scope',
  'invalid_token',
  'not_found',
  'method_not_allowed',
  // OAuth's `error`
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'invalid_scope',
  'unauthorized_client',
  'unsupported_grant_type',
  'unsupported_response_type',
  'access_denied',
  'server_error',
  'temporarily_unavailable',
]);

function attachUpstream<E extends GatewayError>(error: E, response: UpstreamResponse | undefined, context: UpstreamErrorContext): E {
  // The provider's own identifier for what went wrong lets an app tell cases apart without the provider's prose.
  const slug = upstreamErrorKind(response?.body);
  if (slug !== undefined && PROVIDER_ERROR_SLUGS.has(slug)) error.extensions.providerError = slug;
  const traceId = asRecord(response?.body)?.trace_id;
  const original = new ProviderResponseError(
    context.route,
    response?.status,
    withoutSecrets(response?.body, context.secrets ?? []),
    typeof traceId === 'string' ? traceId : undefined,
    context.requestId,
    context.cause,
  );
  // Not every subclass constructor forwards options; GatewayError keeps originalError non-enumerable, as here.
  Object.defineProperty(error, 'originalError', { value: original, enumerable: false, writable: true, configurable: true });
  return error;
}

const CREDENTIALS_REJECTED =
  'The provider did not accept the gateway’s credentials for this call. This is a gateway problem, not your input; try again later and report it if it persists.';

function errorForStatus(response: UpstreamResponse, context: UpstreamErrorContext): GatewayError {
  const { status, body } = response;
  const kind = upstreamErrorKind(body);
  const thing = context.resource ?? 'resource';

  switch (kind) {
    case 'payment-not-refundable':
      return new PaymentNotRefundableError('The payment cannot be refunded: it is not authorized yet, or it has failed.');
    case 'refund-limit-exceeded':
      return new RefundExceedsPaymentError('The refund amount, added to the refunds already made, exceeds the payment amount. Refund a smaller amount.');
    case 'idempotency-key-reuse':
      return new IdempotencyConflictError(
        'This idempotency key was already used for a different request. Repeat the original request exactly, or use a new key for a new request.',
      );
    case 'idempotency-key-concurrency-conflict':
      return new IdempotencyConflictError('A request with the same idempotency key is still being processed. Wait for it to finish, then retry.');
    case 'invalid_grant':
      return new UnauthenticatedError('Your bank session has ended or the sign-in could not be completed. Sign in again.');
    case 'invalid-signature':
      return new UpstreamError('The provider rejected the gateway’s request signature. This is a gateway problem; report it if it persists.');
    case 'task_not_ready':
      return new UpstreamError('The data task has not finished yet. Wait for its notification, then fetch the results again.');
    case 'account_not_found':
      return new NotFoundError('No account with that id exists for this user.');
    case 'card_not_found':
      return new NotFoundError('No card with that id exists for this user.');
    case 'task_not_found':
      return new NotFoundError('No data task with that id exists for this user.');
  }

  if (status === 400 && (kind === 'invalid-parameters' || kind === 'invalid_request' || kind === 'invalid_date_range')) {
    if (context.tokenEndpoint) {
      return new UpstreamError('The provider refused the gateway’s token request. This is a gateway problem; report it if it persists.');
    }
    const fields = rejectedFields(body, context);
    const what = kind === 'invalid_date_range' ? 'The date range is invalid: from must be on or before to' : 'The provider rejected the request';
    const which = fields.length > 0 ? ` (${fields.join(', ')})` : '';
    return new BadUserInputError(`${what}${which}. Correct the input and try again.`, fields[0]);
  }
  if (status === 401) return new UpstreamError(CREDENTIALS_REJECTED);
  if (status === 403) {
    return new UpstreamError('The provider refused this operation for the gateway’s access rights. This is a gateway problem; report it if it persists.');
  }
  if (status === 404) return new NotFoundError(`No ${thing} with that id exists at the provider.`);
  if (status === 429) {
    const seconds = retryAfterSeconds(response.headers);
    return new UpstreamRateLimitedError(
      `The provider is limiting the gateway’s request rate. Retry ${seconds === undefined ? 'shortly' : `after ${seconds} s`}.`,
      seconds,
    );
  }
  if (status >= 500) return new UpstreamUnavailableError('The provider is temporarily unavailable. Try again shortly.');
  return new UpstreamError(`The provider answered with an unexpected error (HTTP ${status}). Try again later; report it if it persists.`);
}

function errorForNoResponse(cause: unknown): GatewayError {
  if (cause instanceof BrokenCircuitError) {
    return new UpstreamUnavailableError('The provider kept failing on this call, so the gateway is not calling it for a few seconds. Try again shortly.');
  }
  const code = (cause as { code?: unknown } | undefined)?.code;
  if (code === 'PROVIDER_BODY_TOO_LARGE') {
    return new UpstreamError('The provider sent an answer larger than the gateway accepts (PROVIDER_MAX_BODY_BYTES). Report it if it persists.');
  }
  const nested = ((cause as { cause?: { code?: unknown } } | undefined)?.cause ?? {}).code;
  const timedOut = TIMEOUT_CODES.has(String(code)) || TIMEOUT_CODES.has(String(nested));
  return new UpstreamUnavailableError(
    timedOut ? 'The provider did not answer in time. Try again shortly.' : 'The provider could not be reached. Try again shortly.',
  );
}

/**
 * Maps a provider answer to the error the client sees. `response` is undefined when none arrived (connection
 * failure or timeout after the retries), with the reason in `context.cause`. The 401 case is reached only after
 * the HTTP client refreshed the token and retried, so it means the gateway's own credentials are bad
 * (UPSTREAM_ERROR); a user's provider session that is gone for good shows as `invalid_grant` on the refresh.
 */
export function upstreamErrorFrom(response: UpstreamResponse | undefined, context: UpstreamErrorContext): GatewayError {
  const error = response === undefined ? errorForNoResponse(context.cause) : errorForStatus(response, context);
  return attachUpstream(error, response, context);
}
