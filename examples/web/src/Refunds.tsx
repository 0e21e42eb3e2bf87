import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { ApolloProvider, useMutation, useSubscription } from '@apollo/client/react';
import { createApolloClient } from './client';
import { GATEWAY_URL } from './config';
import { REFUND_PAYMENT, REFUND_UPDATED, type RefundView } from './operations';
import { describeError } from './errors';

/** The merchant's desk: a merchant key, not a person's session, so it has an Apollo Client of its own. */
export function Refunds() {
  const [key, setKey] = useState('');
  const [merchantKey, setMerchantKey] = useState<string>();

  function onUseKey(event: FormEvent) {
    event.preventDefault();
    setMerchantKey(key.trim() === '' ? undefined : key.trim());
  }

  return (
    <section>
      <h2>Refund a payment (merchant)</h2>
      <form onSubmit={onUseKey}>
        <label>
          Merchant key
          <input type="password" value={key} onChange={(event) => setKey(event.target.value)} />
        </label>
        <button type="submit">Use merchant key</button>
      </form>
      {merchantKey && <MerchantDesk merchantKey={merchantKey} />}
    </section>
  );
}

function MerchantDesk({ merchantKey }: { merchantKey: string }) {
  const { client, close } = useMemo(() => createApolloClient(GATEWAY_URL, { kind: 'bearer', token: merchantKey }), [merchantKey]);
  useEffect(() => close, [close]);
  return (
    <ApolloProvider client={client}>
      <RefundForm />
    </ApolloProvider>
  );
}

function RefundForm() {
  const [paymentId, setPaymentId] = useState('');
  const [reference, setReference] = useState('Web refund');
  const [amount, setAmount] = useState('');
  const [refund, refunded] = useMutation(REFUND_PAYMENT);

  function onRefund(event: FormEvent) {
    event.preventDefault();
    const amountInMinor = amount.trim() === '' ? undefined : Math.round(Number(amount) * 100);
    // A fresh idempotency key per press: the same key twice answers the refund made the first time.
    void refund({ variables: { input: { paymentId: paymentId.trim(), reference, amountInMinor, idempotencyKey: crypto.randomUUID() } } });
  }

  return (
    <>
      <form onSubmit={onRefund}>
        <label>
          Payment id
          <input value={paymentId} onChange={(event) => setPaymentId(event.target.value)} />
        </label>
        <label>
          Amount (empty: the whole payment)
          <input value={amount} onChange={(event) => setAmount(event.target.value)} inputMode="decimal" />
        </label>
        <label>
          Reference
          <input value={reference} onChange={(event) => setReference(event.target.value)} maxLength={18} />
        </label>
        <button type="submit">Refund</button>
      </form>
      {refunded.error && <p className="alert">{describeError(refunded.error)}</p>}
      {refunded.data && <RefundStatus refund={refunded.data.refundPayment} />}
    </>
  );
}

// #region refund-live
/** The refund as created, then each status the gateway pushes: PENDING, AUTHORIZED, then EXECUTED or FAILED. */
function RefundStatus({ refund }: { refund: RefundView }) {
  const { data, error } = useSubscription(REFUND_UPDATED, { variables: { paymentId: refund.paymentId, refundId: refund.refundId } });
  const latest = data?.refundUpdated ?? refund;
  return (
    <p>
      Refund of {(latest.amountInMinor / 100).toFixed(2)} {latest.currency}: <span className="status">{latest.status}</span>
      {latest.failureReason && ` (${latest.failureReason})`}
      {error && <span className="alert"> (live updates stopped: {describeError(error)})</span>}
    </p>
  );
}
// #endregion refund-live
