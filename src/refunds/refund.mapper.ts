import type { ProviderRefund, ProviderRefundStatus } from '../platform/provider/provider-types';
import { UpstreamError } from '../platform/errors/gateway-errors';
import { ProviderResponseError } from '../platform/provider/provider-errors';
import { Refund } from './refund.type';
import { RefundStatus } from './refund-status.enum';

const STATUSES: Readonly<Record<string, RefundStatus>> = {
  pending: RefundStatus.PENDING,
  authorized: RefundStatus.AUTHORIZED,
  executed: RefundStatus.EXECUTED,
  failed: RefundStatus.FAILED,
};

/**
 * A status outside the enum cannot be shown without breaking the contract's RefundStatus, so it is an upstream
 * error (UPSTREAM_ERROR, with the provider's value on originalError for the log), not a crash.
 */
export function toRefundStatus(status: ProviderRefundStatus, route = 'payments.refund'): RefundStatus {
  const known = STATUSES[status];
  if (known) return known;
  throw new UpstreamError(
    'The provider reported a refund status the gateway does not know. Try again later; report it if it persists.',
    {},
    { originalError: new ProviderResponseError(route, 200, { unknownRefundStatus: status }, undefined, undefined) },
  );
}

/** The provider's refund object does not carry its payment id; the caller knows it from the path it asked. */
export function toRefund(source: ProviderRefund, paymentId: string): Refund {
  return Object.assign(new Refund(), {
    id: source.id,
    paymentId,
    amountInMinor: source.amount_in_minor,
    currency: source.currency,
    status: toRefundStatus(source.status),
    reference: source.reference,
    createdAt: source.created_at,
    authorizedAt: source.authorized_at ?? null,
    executedAt: source.executed_at ?? null,
    failureReason: source.failure_reason ?? null,
  });
}

/** Spec: a failed refund gave nothing back, so it does not count towards the total refunded. */
export function refundedAmount(refunds: readonly Refund[]): number {
  return refunds.filter((refund) => refund.status !== RefundStatus.FAILED).reduce((sum, refund) => sum + refund.amountInMinor, 0);
}
