import type { RouteModule, SandboxContext } from '../context';
import type { FixturePayment } from '../fixtures/types';
import { Problem, sendJson } from '../http/respond';
import { IdempotencyKeys } from './idempotency';
import { registerPaymentControlRoutes } from './payment.control';
import { findPayment } from './payments';
import { acceptProcessing } from './processing';
import { requireApplicationToken, requireSignature } from './request-guards';
import { RefundStore } from './refund.store';
import { refundView } from './refund.types';
import { requireIdempotencyKey, validateRefundRequest, type RefundRequest } from './refund.validate';

/** The scope the client-credentials token needs for refunds (docs/provider-choices.md, Tokens). */
export const REFUNDS_SCOPE = 'payments';
const SIGNATURE_HEADER = 'Svc-Signature';

export const registerRefundRoutes: RouteModule = ({ provider, control }, context) => {
  const refunds = new RefundStore(context);
  const keys = new IdempotencyKeys<string>(context.clock);

  provider
    .add('POST', '/v3/payments/:paymentId/refunds', async (req, res) => {
      requireApplicationToken(context, req, REFUNDS_SCOPE);
      // The key must be covered by the signature, or a replayed body could be sent again under a fresh key.
      requireSignature(context, req, SIGNATURE_HEADER, ['Idempotency-Key']);
      const key = requireIdempotencyKey(req);
      const request = validateRefundRequest(req);
      const payment = paymentOr404(context, req.params.paymentId!);

      const fingerprint = fingerprintOf(payment, request);
      const known = keys.lookup(key, fingerprint);
      if (known.kind === 'replay') return sendJson(res, 202, { id: known.result });
      if (known.kind === 'reuse') {
        throw new Problem(
          422,
          'idempotency-key-reuse',
          `Idempotency-Key ${key} was already used with a different request; retry with the same payment and body to get the same refund, or use a new key for a new refund.`,
        );
      }
      if (known.kind === 'in-flight') {
        throw new Problem(
          409,
          'idempotency-key-concurrency-conflict',
          `A request with Idempotency-Key ${key} is still being processed; retry it once that one has been answered.`,
        );
      }

      keys.begin(key, fingerprint);
      try {
        await acceptProcessing();
        // Checked after the pause, together with the creation and without yielding in between, so two refunds
        // racing on one payment cannot both pass the limit.
        const amount = request.amount_in_minor ?? payment.amount_in_minor;
        refunds.assertRefundable(payment, amount);
        const refund = refunds.create(payment, amount, request.reference);
        keys.complete(key, fingerprint, refund.id);
        sendJson(res, 202, { id: refund.id });
      } finally {
        keys.abandon(key);
      }
    })
    .add('GET', '/v3/payments/:paymentId/refunds', (req, res) => {
      requireApplicationToken(context, req, REFUNDS_SCOPE);
      requireSignature(context, req, SIGNATURE_HEADER);
      const payment = paymentOr404(context, req.params.paymentId!);
      // Oldest first: creation order is the order of created_at.
      sendJson(res, 200, { items: refunds.list(payment.id).map(refundView) });
    })
    .add('GET', '/v3/payments/:paymentId/refunds/:refundId', (req, res) => {
      requireApplicationToken(context, req, REFUNDS_SCOPE);
      requireSignature(context, req, SIGNATURE_HEADER);
      const payment = paymentOr404(context, req.params.paymentId!);
      const refund = refunds.get(payment.id, req.params.refundId!);
      if (!refund) {
        throw new Problem(404, 'not-found', `Payment ${payment.id} has no refund with id ${JSON.stringify(req.params.refundId)}.`);
      }
      sendJson(res, 200, refundView(refund));
    });

  registerPaymentControlRoutes(control, context, refunds);
};

function paymentOr404(context: SandboxContext, paymentId: string): FixturePayment {
  const payment = findPayment(context, paymentId);
  if (!payment) throw new Problem(404, 'not-found', `No payment has id ${JSON.stringify(paymentId)}.`);
  return payment;
}

/** What makes two requests with one key "the same": the payment and the body as sent (an omitted amount included). */
function fingerprintOf(payment: FixturePayment, request: RefundRequest): string {
  return JSON.stringify([payment.id, request.amount_in_minor ?? null, request.reference]);
}
