import { randomUUID } from 'node:crypto';
import type { ProviderRefund } from '../../src/platform/provider/provider-types';
import type { RefundAttempt } from '../../src/refunds/refund-key.store';
import {
  decideOutcome,
  KEY_MEMORY_MARGIN_MS,
  keyMayBeRemembered,
  keySurelyRemembered,
  PROVIDER_KEY_MEMORY_MS,
  REFUND_ATTEMPT_GRACE_MS,
} from '../../src/refunds/refund-outcome';

const HOUR_MS = 3600 * 1000;
const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const PAYMENT = 'a5b1c3d4-0000-4000-8000-000000000001';

/** An attempt of refunding 450 of PAYMENT with reference 'Item', recorded and sent at `atMs`. */
function attempt(atMs: number, overrides: Partial<RefundAttempt> = {}): RefundAttempt {
  return {
    idempotencyKey: randomUUID(),
    fingerprint: 'item-450',
    paymentId: PAYMENT,
    request: { amount_in_minor: 450, reference: 'Item' },
    generated: false,
    createdAt: new Date(atMs).toISOString(),
    answered: false,
    sentAtMs: atMs,
    ...overrides,
  };
}

function refund(atMs: number, overrides: Partial<ProviderRefund> = {}): ProviderRefund {
  return {
    id: randomUUID(),
    amount_in_minor: 450,
    currency: 'GBP',
    status: 'authorized',
    reference: 'Item',
    created_at: new Date(atMs).toISOString(),
    ...overrides,
  };
}

describe('the key memory an attempt can rely on', () => {
  it('counts the provider as surely remembering a key until 24 hours after the attempt was recorded, less the margin', () => {
    const lost = attempt(T0);
    expect(keySurelyRemembered(lost, T0 + PROVIDER_KEY_MEMORY_MS - KEY_MEMORY_MARGIN_MS - 1)).toBe(true);
    expect(keySurelyRemembered(lost, T0 + PROVIDER_KEY_MEMORY_MS - KEY_MEMORY_MARGIN_MS)).toBe(false);
  });

  it('counts a key as possibly remembered until 24 hours after it was last sent, plus the margin', () => {
    const resent = attempt(T0, { sentAtMs: T0 + 20 * HOUR_MS });
    expect(keyMayBeRemembered(resent, T0 + 44 * HOUR_MS)).toBe(true);
    expect(keyMayBeRemembered(resent, T0 + 20 * HOUR_MS + PROVIDER_KEY_MEMORY_MS + KEY_MEMORY_MARGIN_MS)).toBe(false);
  });
});

describe('deciding the outcome of a refund attempt whose answer was lost', () => {
  it('asks the provider under the attempt key while the key is surely remembered, even when a matching refund is listed and no other attempt is pending', () => {
    const lost = attempt(T0);
    expect(decideOutcome(lost, { refunds: [refund(T0 + 1000)], others: [] }, T0 + 22 * HOUR_MS)).toEqual({ kind: 'ask-provider' });
  });

  it('finds that nothing was made when no listed refund could be the request: another reference, amount, an earlier refund, or one another key holds', () => {
    const lost = attempt(T0);
    const holder = attempt(T0, { refundId: 'held' });
    const refunds = [
      refund(T0 + 1000, { reference: 'Other item' }),
      refund(T0 + 1000, { amount_in_minor: 451 }),
      refund(T0 - 11 * 60 * 1000),
      refund(T0 + 1000, { id: 'held' }),
    ];
    for (const now of [T0 + HOUR_MS, T0 + 30 * HOUR_MS]) {
      expect(decideOutcome(lost, { refunds, others: [holder] }, now)).toEqual({ kind: 'not-made' });
    }
  });

  it('allows ten minutes of clock skew: a refund created up to then before the attempt can be its outcome', () => {
    const lost = attempt(T0);
    const early = refund(T0 - 9 * 60 * 1000);
    expect(decideOutcome(lost, { refunds: [early], others: [] }, T0 + 30 * HOUR_MS)).toEqual({ kind: 'adopt', refund: early });
  });

  it('past the key memory, adopts the oldest matching refund nobody holds when no other attempt is pending', () => {
    const lost = attempt(T0);
    const older = refund(T0 + 1000);
    const newer = refund(T0 + 2000);
    expect(decideOutcome(lost, { refunds: [newer, older], others: [attempt(T0, { refundId: randomUUID() })] }, T0 + 30 * HOUR_MS)).toEqual({
      kind: 'adopt',
      refund: older,
    });
  });

  it('matches a whole-payment request with a refund of any amount', () => {
    const whole = attempt(T0, { request: { reference: 'Item' } });
    const listed = refund(T0 + 1000, { amount_in_minor: 9_999 });
    expect(decideOutcome(whole, { refunds: [listed], others: [] }, T0 + 30 * HOUR_MS)).toEqual({ kind: 'adopt', refund: listed });
  });

  it('never adopts a refund that another pending attempt, which the provider may still answer, may have made: it waits for the reconciler to ask for that one', () => {
    const now = T0 + 30 * HOUR_MS;
    const old = attempt(T0);
    const young = attempt(now - 60_000);
    const listed = refund(now - 30_000);
    expect(decideOutcome(old, { refunds: [listed], others: [old, young] }, now)).toEqual({
      kind: 'undecided',
      retryAtMs: young.sentAtMs + REFUND_ATTEMPT_GRACE_MS,
    });
  });

  it('waits, too, for an older pending attempt resent recently: its key may be remembered until a day after that send', () => {
    const first = attempt(T0);
    const resent = attempt(T0 + 1000, { sentAtMs: T0 + 20 * HOUR_MS });
    const listed = refund(T0 + 20 * HOUR_MS + 500);
    expect(decideOutcome(first, { refunds: [listed], others: [resent] }, T0 + 30 * HOUR_MS)).toEqual({
      kind: 'undecided',
      retryAtMs: resent.sentAtMs + PROVIDER_KEY_MEMORY_MS + KEY_MEMORY_MARGIN_MS,
    });
  });

  it('shares refunds first come, first served with pending attempts the provider has surely forgotten: they can never be answered one', () => {
    const first = attempt(T0);
    const forgotten = attempt(T0 + 1000);
    const listed = refund(T0 + 2000);
    expect(decideOutcome(first, { refunds: [listed], others: [forgotten] }, T0 + 30 * HOUR_MS)).toEqual({ kind: 'adopt', refund: listed });
  });

  it('adopts a refund no rival may have made, passing over one a rival may have', () => {
    const old = attempt(T0);
    const listedBeforeRival = refund(T0 + 1000);
    const listedAfterRival = refund(T0 + 29 * HOUR_MS + 1000);
    // Recorded 29 hours in: it cannot have made a refund listed a day before it.
    const young = attempt(T0 + 29 * HOUR_MS);
    expect(decideOutcome(old, { refunds: [listedAfterRival, listedBeforeRival], others: [young] }, T0 + 30 * HOUR_MS)).toEqual({
      kind: 'adopt',
      refund: listedBeforeRival,
    });
    // With only the later one listed, the old attempt waits.
    expect(decideOutcome(old, { refunds: [listedAfterRival], others: [young] }, T0 + 30 * HOUR_MS).kind).toBe('undecided');
  });

  it('is not held back by a pending attempt with another reference or amount', () => {
    const old = attempt(T0);
    const others = [
      attempt(T0 + 29 * HOUR_MS, { request: { amount_in_minor: 450, reference: 'Other item' } }),
      attempt(T0 + 29 * HOUR_MS, { request: { amount_in_minor: 451, reference: 'Item' } }),
    ];
    const listed = refund(T0 + 29 * HOUR_MS + 1000);
    expect(decideOutcome(old, { refunds: [listed], others }, T0 + 30 * HOUR_MS)).toEqual({ kind: 'adopt', refund: listed });
  });
});
