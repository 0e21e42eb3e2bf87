import { GraphQLError, type GraphQLErrorOptions } from 'graphql';

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
  'UPSTREAM_RATE_LIMITED',
  'UPSTREAM_UNAVAILABLE',
  'UPSTREAM_ERROR',
  'INTERNAL_SERVER_ERROR',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

type Extensions = Record<string, unknown>;

/** Base of every error the gateway raises on purpose: a fixed code, a message safe to show a client. */
export abstract class GatewayError extends GraphQLError {
  /** Each subclass fixes its code here, so an error's class and its code can never disagree. */
  static readonly code: ErrorCode;

  constructor(message: string, extensions: Extensions = {}, options: Pick<GraphQLErrorOptions, 'originalError'> = {}) {
    const { code } = new.target as unknown as { code: ErrorCode };
    super(message, { ...options, extensions: { ...extensions, code } });
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
