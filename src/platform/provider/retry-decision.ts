/*
 * Whether the HTTP client sends a request again after a failed send, and after how long: a pure decision from the
 * send's outcome and the request's state (stripe-node's `_shouldRetry`, adapted). The client's own loop does the
 * rest (the deadline's abort, the 401 token refresh, spans), which a generic retry policy has no place for.
 */
import { retryAfterSeconds } from './provider-errors';

/** Failures with no answer that a new connection may not have: the connection, DNS, and the three timeouts. */
export const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** The transient code in the error or its causes, else the error's own code. */
export function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 4; current = (current as { cause?: unknown }).cause, depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return code;
  }
  const top = (error as { code?: unknown } | undefined)?.code;
  return typeof top === 'string' ? top : undefined;
}

/** 429, and every 5xx but 501 and 505, which never get better. */
export const isRetryableStatus = (status: number): boolean => status === 429 || (status >= 500 && status !== 501 && status !== 505);

/** A send that failed: no answer (with the connection error's code), or an answer that was not a success. */
export type FailedSend = { errorCode: string | undefined } | { status: number; headers: Record<string, string | string[] | undefined> };

export interface RetryState {
  /** A GET, or a POST carrying an idempotency key the provider deduplicates on. */
  retryable: boolean;
  /** Sends still allowed after this one. */
  sendsLeft: number;
  /** This attempt's exponential backoff, jitter included. */
  backoffMs: number;
  /** The longest Retry-After waited out; a longer one fails the request at once. */
  retryAfterCapMs: number;
  /** Milliseconds until the operation's deadline; undefined without one. A wait must end before it. */
  msLeft: number | undefined;
  /** Wall-clock milliseconds, for a Retry-After given as an HTTP date. */
  nowMs: number;
}

export type RetryDecision = { retry: false } | { retry: true; waitMs: number; reason: string };

const FINAL: RetryDecision = { retry: false };

export function shouldRetry(send: FailedSend, state: RetryState): RetryDecision {
  if (!state.retryable || state.sendsLeft <= 0) return FINAL;
  let waitMs = state.backoffMs;
  let reason: string;
  if ('errorCode' in send) {
    if (send.errorCode === undefined || !TRANSIENT_CODES.has(send.errorCode)) return FINAL;
    reason = send.errorCode;
  } else {
    if (!isRetryableStatus(send.status)) return FINAL;
    if (send.status === 429 || send.status === 503) {
      const seconds = retryAfterSeconds(send.headers, state.nowMs);
      if (seconds !== undefined && seconds * 1000 > state.retryAfterCapMs) return FINAL;
      if (seconds !== undefined) waitMs = Math.max(seconds * 1000, waitMs);
    }
    reason = `http_${send.status}`;
  }
  if (state.msLeft !== undefined && waitMs >= state.msLeft) return FINAL;
  return { retry: true, waitMs, reason };
}
