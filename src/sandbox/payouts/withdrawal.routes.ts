import type { RouteModule } from '../context';
import { Problem, sendJson } from '../http/respond';
import { requireApplicationToken, requireSignature } from '../payments/request-guards';
import { WithdrawalStore } from './withdrawal.store';
import { validateWithdrawalRequest } from './withdrawal.validate';

/** The scope the client-credentials token needs for direct payouts (docs/provider-choices.md, Tokens). */
export const PAYOUT_SCOPE = 'paydirect';

export const registerWithdrawalRoutes: RouteModule = ({ provider }, context) => {
  const store = new WithdrawalStore(context);

  provider
    .add('POST', '/v1/withdrawals', async (req, res) => {
      requireApplicationToken(context, req, PAYOUT_SCOPE);
      // Over the bytes as received, before parsing: re-serialised JSON would not be what the client signed.
      requireSignature(context, req, 'X-SVC-Signature');
      const withdrawal = await store.create(validateWithdrawalRequest(req));
      sendJson(res, 202, { result: withdrawal });
    })
    .add('GET', '/v1/withdrawals/:transactionId', (req, res) => {
      requireApplicationToken(context, req, PAYOUT_SCOPE);
      const transactionId = req.params.transactionId!;
      const withdrawal = store.get(transactionId);
      if (!withdrawal) throw new Problem(404, 'not-found', `No withdrawal has transaction_id ${JSON.stringify(transactionId)}.`);
      sendJson(res, 200, { result: withdrawal });
    });
};
