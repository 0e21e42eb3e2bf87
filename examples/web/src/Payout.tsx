import { useState, type FormEvent } from 'react';
import { useMutation, useSubscription } from '@apollo/client/react';
import { CREATE_PAYOUT, PAYOUT_UPDATED, VERIFY, type PayoutView } from './operations';
import { describeError } from './errors';

/** Verify a payee's name at their bank, then pay out to one of the verified IBANs and follow the payout live. */
export function Payout() {
  const [name, setName] = useState('');
  const [iban, setIban] = useState('');
  const [amount, setAmount] = useState('1.00');
  const [reference, setReference] = useState('Web example');
  const [verify, verified] = useMutation(VERIFY);
  const [pay, paid] = useMutation(CREATE_PAYOUT);
  const result = verified.data?.verifyAccountHolder;
  const ibans = result?.report.filter((entry) => entry.verifiable && entry.iban).map((entry) => entry.iban!) ?? [];

  async function onVerify(event: FormEvent) {
    event.preventDefault();
    const answer = await verify({ variables: { name } });
    const first = answer.data?.verifyAccountHolder.report.find((entry) => entry.verifiable && entry.iban);
    setIban(first?.iban ?? '');
  }

  function onPay(event: FormEvent) {
    event.preventDefault();
    const amountInMinor = Math.round(Number(amount) * 100);
    // A fresh transactionId per payout: the gateway treats the same id twice as the same payout.
    const input = {
      transactionId: crypto.randomUUID(),
      amountInMinor,
      currency: 'GBP',
      beneficiaryIban: iban,
      beneficiaryName: name,
      beneficiaryReference: reference,
    };
    void pay({ variables: { input } });
  }

  return (
    <section>
      <h2>Pay out</h2>
      <form onSubmit={(event) => void onVerify(event)}>
        <label>
          Payee name
          <input value={name} onChange={(event) => setName(event.target.value)} />
        </label>
        <button type="submit">Verify payee</button>
      </form>
      {verified.error && <p className="alert">{describeError(verified.error)}</p>}
      {result && <p>{result.verified ? `Verified: ${result.accountHolderName}` : `Not verified: the bank knows no account holder named ${name}`}</p>}
      {result?.verified && (
        <form onSubmit={onPay}>
          <label>
            To IBAN
            <select value={iban} onChange={(event) => setIban(event.target.value)}>
              {ibans.map((value) => (
                <option key={value}>{value}</option>
              ))}
            </select>
          </label>
          <label>
            Amount (GBP)
            <input value={amount} onChange={(event) => setAmount(event.target.value)} inputMode="decimal" />
          </label>
          <label>
            Reference
            <input value={reference} onChange={(event) => setReference(event.target.value)} />
          </label>
          <button type="submit">Pay out</button>
        </form>
      )}
      {paid.error && <p className="alert">{describeError(paid.error)}</p>}
      {paid.data && <PayoutStatus payout={paid.data.createPayout} />}
    </section>
  );
}

// #region payout-live
/** The payout as created, then each status the gateway pushes over the WebSocket. */
function PayoutStatus({ payout }: { payout: PayoutView }) {
  const { data, error } = useSubscription(PAYOUT_UPDATED, { variables: { transactionId: payout.transactionId } });
  const latest = data?.payoutUpdated ?? payout;
  return (
    <p>
      Payout of {(latest.amountInMinor / 100).toFixed(2)} {latest.currency} to {latest.beneficiaryName}: <span className="status">{latest.state}</span>
      {error && <span className="alert"> (live updates stopped: {describeError(error)})</span>}
    </p>
  );
}
// #endregion payout-live
