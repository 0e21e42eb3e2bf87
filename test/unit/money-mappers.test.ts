import { UpstreamError } from '../../src/platform/errors/gateway-errors';
import { refundedAmount, refundFromProvider } from '../../src/refunds/refund.model';
import { verifiedBeneficiariesFrom } from '../../src/beneficiaries/verification-results';
import type { ProviderRefund, ProviderVerificationResult } from '../../src/platform/provider/provider-types';
import { PayoutStatus, toPayoutStatus } from '../../src/payouts/payout-status.enum';
import { payoutLifecycle, UNPAID_STATUSES } from '../../src/payouts/payout-status';

const REFUND: ProviderRefund = {
  id: '0b9f2c1e-5a4d-4e3f-8c2b-1a0f9e8d7c6b',
  amount_in_minor: 500,
  currency: 'GBP',
  status: 'pending',
  reference: 'Order 42',
  created_at: '2024-03-01T09:12:45.1Z',
};

describe('refund mapping', () => {
  it.each([
    ['pending', 'PENDING'],
    ['authorized', 'AUTHORIZED'],
    ['executed', 'EXECUTED'],
    ['failed', 'FAILED'],
  ])('maps the provider status %s to %s, adding the payment id and keeping timestamps verbatim', (status, expected) => {
    expect(refundFromProvider({ ...REFUND, status }, 'payment-1')).toEqual({
      id: REFUND.id,
      paymentId: 'payment-1',
      amountInMinor: 500,
      currency: 'GBP',
      status: expected,
      reference: 'Order 42',
      createdAt: '2024-03-01T09:12:45.1Z',
      authorizedAt: null,
      executedAt: null,
      failureReason: null,
    });
  });

  it('turns a status it does not know into UPSTREAM_ERROR instead of an invalid enum value', () => {
    expect(() => refundFromProvider({ ...REFUND, status: 'reversed' }, 'payment-1')).toThrow(UpstreamError);
  });

  it('counts every refund but the failed ones', () => {
    const refunds = [
      refundFromProvider({ ...REFUND, amount_in_minor: 100, status: 'executed' }, 'p'),
      refundFromProvider({ ...REFUND, amount_in_minor: 200, status: 'failed', failure_reason: 'payment_failed' }, 'p'),
      refundFromProvider({ ...REFUND, amount_in_minor: 300, status: 'pending' }, 'p'),
    ];
    expect(refundedAmount(refunds)).toBe(400);
  });
});

describe('payout status mapping', () => {
  it.each([
    ['pending-submission', 'PENDING_SUBMISSION'],
    ['awaiting-approval', 'AWAITING_APPROVAL'],
    ['authorised', 'AUTHORISED'],
    ['submitted', 'SUBMITTED'],
    ['settled', 'SETTLED'],
    ['rejected', 'REJECTED'],
    ['failed', 'FAILED'],
    ['declined', 'DECLINED'],
    ['expired', 'EXPIRED'],
    ['conflict', 'CONFLICT'],
  ])('maps the status %s to %s', (status, expected) => {
    expect(toPayoutStatus(status)).toBe(expected);
  });

  it('gives every final and unpaid status a value of its own', () => {
    for (const status of [...payoutLifecycle.final, ...UNPAID_STATUSES]) expect(toPayoutStatus(status)).not.toBe(PayoutStatus.UNKNOWN);
  });

  it('maps a status the gateway does not know to UNKNOWN rather than failing, as payoutLifecycle ranks it', () => {
    expect(toPayoutStatus('reversed')).toBe('UNKNOWN');
    expect(toPayoutStatus('constructor')).toBe('UNKNOWN');
    expect(payoutLifecycle.rank('reversed')).toBe(2);
  });
});

describe('verified beneficiaries from a verification', () => {
  const report = (iban: string | undefined, holders: { name: string; verified: boolean }[]) => ({
    verifiable: true,
    currency: 'GBP',
    provider_id: 'mock',
    account_type: 'CURRENT',
    account_holders: holders.map((holder) => ({ ...holder, match_score: holder.verified ? 100 : 10 })),
    display_name: 'Account',
    iban: iban as string,
    swift_bic: 'MOCKGB2L',
    account_number: '12345678',
    sort_code: '01-02-03',
  });

  it('keeps each IBAN whose holder matched, normalised, with the holder name the bank reported', () => {
    const result: ProviderVerificationResult = {
      verified: true,
      account_holder_name: 'john doe',
      match_score: 100,
      report: [
        report('gb29 nwbk 6016 1331 9268 19', [{ name: 'John Doe', verified: true }]),
        report('DE89370400440532013000', [{ name: 'Someone Else', verified: false }]),
        report(undefined, [{ name: 'John Doe', verified: true }]),
        report('GB29NWBK60161331926819', [{ name: 'John Doe', verified: true }]),
        report('GB82WEST12345698765432', [
          { name: 'Zoë Ng', verified: false },
          { name: 'John Doe', verified: true },
        ]),
      ],
    };
    expect(verifiedBeneficiariesFrom(result, '2026-04-01T00:00:00.000Z')).toEqual([
      { iban: 'GB29NWBK60161331926819', name: 'John Doe', verifiedAt: '2026-04-01T00:00:00.000Z' },
      { iban: 'GB82WEST12345698765432', name: 'John Doe', verifiedAt: '2026-04-01T00:00:00.000Z' },
    ]);
  });
});
