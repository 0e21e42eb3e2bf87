import type { SandboxContext } from '../context';
import type { FixturePayment, PaymentStatus } from '../fixtures/types';

/** "authorized or later" (spec), a failed payment excepted (docs/provider-choices.md, Refunds and payments). */
export const REFUNDABLE_STATUSES: readonly PaymentStatus[] = ['authorized', 'executed', 'settled'];

/** A payment can settle once its funds have moved, i.e. from authorized or executed. */
export const SETTLEABLE_STATUSES: readonly PaymentStatus[] = ['authorized', 'executed'];

/** A payment can fail at any point before it settles. */
export const FAILABLE_STATUSES: readonly PaymentStatus[] = ['authorization_required', 'authorizing', 'authorized', 'executed'];

/** Payment ids are UUIDs; matched case-insensitively, as the UUIDs they are. */
export function findPayment(context: SandboxContext, paymentId: string): FixturePayment | undefined {
  const id = paymentId.toLowerCase();
  return context.fixtures.payments.find((payment) => payment.id === id);
}
