/** The only values `extensions.code` ever takes; apps switch on them, so they are part of the API. */
export const ERROR_CODES = [
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'BAD_USER_INPUT',
  'NOT_FOUND',
  'BENEFICIARY_NOT_VERIFIED',
  'PAYMENT_NOT_REFUNDABLE',
  'REFUND_EXCEEDS_PAYMENT',
  'IDEMPOTENCY_CONFLICT',
  'PAYOUT_LIMIT_EXCEEDED',
  'DATA_TASK_LIMIT_EXCEEDED',
  'TRY_AGAIN',
  'UPSTREAM_RATE_LIMITED',
  'UPSTREAM_UNAVAILABLE',
  'UPSTREAM_ERROR',
  'INTERNAL_SERVER_ERROR',
  'PERSISTED_DOCUMENT_REQUIRED',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'PERSISTED_QUERY_HASH_MISMATCH',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

type Extensions = Record<string, unknown>;

/**
 * Base of every error the gateway raises on purpose: a fixed code, a message safe to show a client, and the
 * extensions a client sees beside the code. It knows nothing of GraphQL: the operation pipeline turns it into a
 * GraphQL error in one place (src/platform/graphql/error-masking.ts), for HTTP and WebSocket alike.
 */
export abstract class GatewayError extends Error {
  /** Each subclass fixes its code here, so an error's class and its code can never disagree. */
  static readonly code: ErrorCode;
  /** What a client sees as `extensions`, the code last (as clients have always received it). */
  readonly extensions: Extensions;
  /** What the log gets behind the client's error (a provider's answer); non-enumerable, so it never reaches a response. */
  declare originalError: Error | undefined;

  constructor(message: string, extensions: Extensions = {}, options: { originalError?: Error } = {}) {
    super(message);
    const { code } = new.target as unknown as { code: ErrorCode };
    this.extensions = { ...extensions, code };
    Object.defineProperty(this, 'originalError', { value: options.originalError, enumerable: false, writable: true, configurable: true });
  }

  get code(): ErrorCode {
    return this.extensions.code as ErrorCode;
  }
}

export class UnauthenticatedError extends GatewayError {
  static override readonly code = 'UNAUTHENTICATED';
}

export class ForbiddenError extends GatewayError {
  static override readonly code = 'FORBIDDEN';
}

/** `field` names the input that was wrong, e.g. `input.beneficiaryIban`. */
export class BadUserInputError extends GatewayError {
  static override readonly code = 'BAD_USER_INPUT';

  constructor(message: string, field?: string) {
    super(message, field === undefined ? {} : { field });
  }
}

export class NotFoundError extends GatewayError {
  static override readonly code = 'NOT_FOUND';
}

export class BeneficiaryNotVerifiedError extends GatewayError {
  static override readonly code = 'BENEFICIARY_NOT_VERIFIED';
}

export class PaymentNotRefundableError extends GatewayError {
  static override readonly code = 'PAYMENT_NOT_REFUNDABLE';
}

export class RefundExceedsPaymentError extends GatewayError {
  static override readonly code = 'REFUND_EXCEEDS_PAYMENT';
}

export class IdempotencyConflictError extends GatewayError {
  static override readonly code = 'IDEMPOTENCY_CONFLICT';
}

/**
 * The relational store kept refusing the request's transaction because concurrent requests changed the same
 * records (PostgreSQL serialization failures and deadlocks, retried with growing delays first). Nothing of that
 * transaction was written, so sending the same request again is safe.
 */
export class TryAgainError extends GatewayError {
  static override readonly code = 'TRY_AGAIN';

  constructor(message: string, retryAfterSeconds: number) {
    super(message, { retryAfterSeconds });
  }
}

export class UpstreamRateLimitedError extends GatewayError {
  static override readonly code = 'UPSTREAM_RATE_LIMITED';

  constructor(message: string, retryAfterSeconds?: number) {
    super(message, retryAfterSeconds === undefined ? {} : { retryAfterSeconds });
  }
}

export class UpstreamUnavailableError extends GatewayError {
  static override readonly code = 'UPSTREAM_UNAVAILABLE';
}

export class UpstreamError extends GatewayError {
  static override readonly code = 'UPSTREAM_ERROR';
}

export class InternalServerError extends GatewayError {
  static override readonly code = 'INTERNAL_SERVER_ERROR';
}

/** Which rule of the payout policy refused a payout; clients see it as `extensions.limit` (docs/money.md). */
export type PayoutLimit = 'per-payout' | 'user-daily' | 'beneficiary-daily';

/** A payout refused by the payout policy before anything reached the provider (docs/money.md). */
export class PayoutLimitExceededError extends GatewayError {
  static override readonly code = 'PAYOUT_LIMIT_EXCEEDED';

  constructor(message: string, limit: PayoutLimit, remainingInMinor: number) {
    super(message, { limit, remainingInMinor });
  }
}

/** A data task refused, or failed, by a cap on what the gateway keeps for a user (docs/operations.md, "Data tasks"). */
export class DataTaskLimitExceededError extends GatewayError {
  static override readonly code = 'DATA_TASK_LIMIT_EXCEEDED';

  constructor(message: string, limit: 'DATA_TASKS_MAX_PER_USER' | 'DATA_TASK_RESULTS_MAX_BYTES', max: number) {
    super(message, { limit, max });
  }
}

/*
 * Persisted documents (src/platform/graphql/persisted/). NOT_FOUND and NOT_SUPPORTED keep Apollo's codes and its 200 status, because
 * Apollo Client's and urql's APQ links read them to resend the text or to stop sending hashes.
 */

/** PERSISTED_DOCUMENTS=only: the request sent a document's text (or a hash of a document not in the manifest). */
export class PersistedDocumentRequiredError extends GatewayError {
  static override readonly code = 'PERSISTED_DOCUMENT_REQUIRED';
}

export class PersistedQueryNotFoundError extends GatewayError {
  static override readonly code = 'PERSISTED_QUERY_NOT_FOUND';
}

export class PersistedQueryNotSupportedError extends GatewayError {
  static override readonly code = 'PERSISTED_QUERY_NOT_SUPPORTED';
}

/** The text sent with a hash does not hash to it: a client bug, or an attempt to register a document under another's hash. */
export class PersistedQueryHashMismatchError extends GatewayError {
  static override readonly code = 'PERSISTED_QUERY_HASH_MISMATCH';
}
