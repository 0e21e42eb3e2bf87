import type { SandboxContext } from '../context';
import type { FixturePayment } from '../fixtures/types';
import { OAuthStyleError, sendJson } from '../http/respond';
import type { Router } from '../http/router';
import { FAILABLE_STATUSES, findPayment, SETTLEABLE_STATUSES } from './payments';
import type { RefundStore } from './refund.store';

/**
 * `POST /sandbox/payments/:id/settle` and `.../fail` (docs/sandbox.md): move a seeded payment as the payer's bank would,
 * and let its refunds follow. Control routes answer errors as `{error, error_description}`.
 */
export function registerPaymentControlRoutes(control: Router, context: SandboxContext, refunds: RefundStore): void {
  control
    .add('POST', '/sandbox/payments/:paymentId/settle', (req, res) => {
      const payment = paymentOr404(context, req.params.paymentId!);
      if (!SETTLEABLE_STATUSES.includes(payment.status)) {
        throw new OAuthStyleError(
          409,
          'invalid_payment_status',
          `payment ${payment.id} is ${payment.status}; only a payment that is ${SETTLEABLE_STATUSES.join(' or ')} can settle`,
        );
      }
      payment.status = 'settled';
      payment.settled_at = context.clock.iso();
      refunds.paymentSettled(payment);
      sendJson(res, 200, payment);
    })
    .add('POST', '/sandbox/payments/:paymentId/fail', (req, res) => {
      const payment = paymentOr404(context, req.params.paymentId!);
      if (!FAILABLE_STATUSES.includes(payment.status)) {
        throw new OAuthStyleError(
          409,
          'invalid_payment_status',
          `payment ${payment.id} is ${payment.status}; only a payment that has not settled or failed yet can fail (${FAILABLE_STATUSES.join(', ')})`,
        );
      }
      payment.status = 'failed';
      payment.failed_at = context.clock.iso();
      refunds.paymentFailed(payment);
      sendJson(res, 200, payment);
    });
}

function paymentOr404(context: SandboxContext, paymentId: string): FixturePayment {
  const payment = findPayment(context, paymentId);
  if (!payment) throw new OAuthStyleError(404, 'not_found', `no payment has id ${JSON.stringify(paymentId)}; GET /sandbox/fixtures lists them`);
  return payment;
}
