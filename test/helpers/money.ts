import type { Fixtures, FixturePayment, FixtureUser, PaymentStatus } from '../../src/sandbox/fixtures/types';
import type { GraphQLResult, Stack } from './stack';

/** GraphQL documents and sandbox look-ups shared by the payout, refund and authorization tests. */

export const VERIFY = /* GraphQL */ `
  mutation Verify($name: String!) {
    verifyAccountHolder(name: $name) {
      verified
      accountHolderName
      matchScore
      report {
        iban
        accountHolders {
          name
          verified
          matchScore
        }
      }
    }
  }
`;

const PAYOUT_FIELDS = `
  transactionId status beneficiaryName beneficiaryIban beneficiaryReference amountInMinor currency contextCode
  authorisedAt submittedAt settledAt rejectedAt failedAt
`;

export const CREATE_PAYOUT = /* GraphQL */ `
  mutation CreatePayout($input: CreatePayoutInput!) { createPayout(input: $input) { ${PAYOUT_FIELDS} } }
`;

export const READ_PAYOUT = /* GraphQL */ `
  query ReadPayout($id: ID!) { payout(transactionId: $id) { ${PAYOUT_FIELDS} } }
`;

export const VIEWER_MONEY = /* GraphQL */ `
  query ViewerMoney {
    viewer {
      verifiedBeneficiaries { iban name verifiedAt }
      payouts { ${PAYOUT_FIELDS} }
    }
  }
`;

// `id` here is the provider's refund id (Refund.refundId), which these tests compare with the sandbox's records.
const REFUND_FIELDS = 'id: refundId paymentId amountInMinor currency status reference createdAt authorizedAt executedAt failureReason';

export const REFUND_PAYMENT = /* GraphQL */ `
  mutation RefundPayment($input: RefundPaymentInput!) { refundPayment(input: $input) { ${REFUND_FIELDS} } }
`;

export const READ_PAYMENT = /* GraphQL */ `
  query ReadPayment($id: ID!) { payment(id: $id) { id: paymentId refundedAmountInMinor refunds { ${REFUND_FIELDS} } } }
`;

export const APPROVE_PAYOUT = /* GraphQL */ `
  mutation Approve($id: ID!) {
    approvePayout(transactionId: $id) {
      transactionId
      status
      amountInMinor
    }
  }
`;
export const DECLINE_PAYOUT = /* GraphQL */ `
  mutation Decline($id: ID!, $reason: String!) {
    declinePayout(transactionId: $id, reason: $reason) {
      transactionId
      status
    }
  }
`;
export const PAYOUT_UPDATED = /* GraphQL */ `
  subscription Payout($id: ID!) {
    payoutUpdated(transactionId: $id) {
      transactionId
      status
    }
  }
`;
/** The reconciler runs only when a test asks (runOnce), so what it repairs is what the test set up. */
export const QUIET_RECONCILER = { RECONCILE_INTERVAL_MS: String(24 * 60 * 60 * 1000) };

export interface PayoutView {
  transactionId: string;
  status: string;
  beneficiaryName: string;
  beneficiaryIban: string;
  beneficiaryReference: string;
  amountInMinor: number;
  currency: string;
  contextCode: string;
  authorisedAt: string | null;
  submittedAt: string | null;
  settledAt: string | null;
  rejectedAt: string | null;
  failedAt: string | null;
}

export interface RefundView {
  id: string;
  paymentId: string;
  amountInMinor: number;
  currency: string;
  status: 'PENDING' | 'AUTHORIZED' | 'EXECUTED' | 'FAILED';
  reference: string;
  createdAt: string;
  authorizedAt: string | null;
  executedAt: string | null;
  failureReason: string | null;
}

export interface LedgerEntry {
  kind: 'withdrawal' | 'refund';
  id: string;
  paymentId?: string;
  amount_in_minor: number;
  currency: string;
}

export interface LoggedRequest {
  method: string;
  path: string;
}

export function fixtures(stack: Stack): Promise<Fixtures> {
  return stack.sandboxJson<Fixtures>('GET', '/sandbox/fixtures');
}

export function user(all: Fixtures, username: string): FixtureUser {
  const found = all.users.find((candidate) => candidate.username === username);
  if (!found) throw new Error(`no seeded user ${username}`);
  return found;
}

/** The user's IBAN for an account in `currency` (GBP: the current account). */
export function ibanOf(person: FixtureUser, currency = 'GBP'): string {
  const account = person.accounts.find((candidate) => candidate.account.currency === currency);
  if (!account) throw new Error(`${person.username} has no ${currency} account`);
  return account.account.account_number.iban;
}

/** The seeded payments in `status`, as many as asked for; fails the test if there are not enough. */
export function paymentsIn(all: Fixtures, status: PaymentStatus, count = 1): FixturePayment[] {
  const found = all.payments.filter((payment) => payment.status === status);
  if (found.length < count) throw new Error(`expected ${count} seeded ${status} payments, found ${found.length}`);
  return found.slice(0, count);
}

export async function ledger(stack: Stack): Promise<{ withdrawals: LedgerEntry[]; refunds: LedgerEntry[] }> {
  return stack.sandboxJson('GET', '/sandbox/ledger');
}

export async function providerRequests(stack: Stack): Promise<LoggedRequest[]> {
  return (await stack.sandboxJson<{ requests: LoggedRequest[] }>('GET', '/sandbox/requests')).requests;
}

export async function advanceSandboxClock(stack: Stack, seconds: number): Promise<void> {
  await stack.sandboxJson('POST', '/sandbox/clock', { advanceSeconds: seconds });
}

export async function injectFault(stack: Stack, fault: Record<string, unknown>): Promise<void> {
  await stack.sandboxJson('POST', '/sandbox/faults', fault);
}

/** The one error of a result, failing with the whole result when there is not exactly one. */
export function onlyError(result: GraphQLResult<unknown>): { message: string; extensions?: Record<string, unknown> } {
  if (result.errors?.length !== 1) throw new Error(`expected exactly one error, got ${JSON.stringify(result)}`);
  return result.errors[0]!;
}

/** The data of a result that must have succeeded, failing with its errors otherwise. */
export function dataOf<T>(result: GraphQLResult<T>): T {
  if (result.errors !== undefined || !result.data) throw new Error(`expected success, got ${JSON.stringify(result.errors ?? result)}`);
  return result.data;
}
