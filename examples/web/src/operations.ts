import { gql, type TypedDocumentNode } from '@apollo/client';

export interface Money {
  amount: string;
  currency: string;
}

export interface AccountSummary {
  id: string;
  accountId: string;
  displayName: string;
  currency: string;
  balance: { available: string; current: string; currency: string } | null;
}

export const ACCOUNTS: TypedDocumentNode<{ viewer: { id: string; accounts: AccountSummary[] } }, Record<string, never>> = gql`
  query Accounts {
    viewer {
      id
      accounts {
        id
        accountId
        displayName
        currency
        balance {
          available
          current
          currency
        }
      }
    }
  }
`;

export interface TransactionsPage {
  edges: { cursor: string; node: { id: string; description: string; timestamp: string; amount: Money } }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

// #region transactions-query
export const TRANSACTIONS: TypedDocumentNode<
  { viewer: { id: string; account: { id: string; transactions: TransactionsPage } | null } },
  { accountId: string; first: number; after?: string | null }
> = gql`
  query Transactions($accountId: ID!, $first: Int!, $after: String) {
    viewer {
      id
      account(id: $accountId) {
        id
        transactions(first: $first, after: $after) {
          edges {
            cursor
            node {
              id
              description
              timestamp
              amount {
                amount
                currency
              }
            }
          }
          pageInfo {
            hasNextPage
            endCursor
          }
        }
      }
    }
  }
`;
// #endregion transactions-query

export interface VerificationReport {
  iban: string | null;
  displayName: string | null;
  verifiable: boolean;
}

export const VERIFY: TypedDocumentNode<
  { verifyAccountHolder: { verified: boolean; accountHolderName: string; report: VerificationReport[] } },
  { name: string }
> = gql`
  mutation VerifyPayee($name: String!) {
    verifyAccountHolder(name: $name) {
      verified
      accountHolderName
      report {
        iban
        displayName
        verifiable
      }
    }
  }
`;

export interface PayoutView {
  id: string;
  transactionId: string;
  state:
    | 'PENDING_SUBMISSION'
    | 'AWAITING_APPROVAL'
    | 'AUTHORISED'
    | 'SUBMITTED'
    | 'SETTLED'
    | 'REJECTED'
    | 'FAILED'
    | 'DECLINED'
    | 'EXPIRED'
    | 'CONFLICT'
    | 'UNKNOWN';
  amountInMinor: number;
  currency: string;
  beneficiaryName: string;
}

const PAYOUT_FIELDS = gql`
  fragment PayoutFields on Payout {
    id
    transactionId
    state
    amountInMinor
    currency
    beneficiaryName
  }
`;

export const CREATE_PAYOUT: TypedDocumentNode<
  { createPayout: PayoutView },
  { input: { transactionId: string; amountInMinor: number; currency: string; beneficiaryIban: string; beneficiaryName: string; beneficiaryReference: string } }
> = gql`
  mutation CreatePayout($input: CreatePayoutInput!) {
    createPayout(input: $input) {
      ...PayoutFields
    }
  }
  ${PAYOUT_FIELDS}
`;

// #region payout-subscription
export const PAYOUT_UPDATED: TypedDocumentNode<{ payoutUpdated: PayoutView }, { transactionId: string }> = gql`
  subscription PayoutUpdated($transactionId: ID!) {
    payoutUpdated(transactionId: $transactionId) {
      ...PayoutFields
    }
  }
  ${PAYOUT_FIELDS}
`;
// #endregion payout-subscription

export interface RefundView {
  id: string;
  refundId: string;
  paymentId: string;
  status: 'PENDING' | 'AUTHORIZED' | 'EXECUTED' | 'FAILED';
  amountInMinor: number;
  currency: string;
  failureReason: string | null;
}

const REFUND_FIELDS = gql`
  fragment RefundFields on Refund {
    id
    refundId
    paymentId
    status
    amountInMinor
    currency
    failureReason
  }
`;

export const REFUND_PAYMENT: TypedDocumentNode<
  { refundPayment: RefundView },
  { input: { paymentId: string; reference: string; amountInMinor?: number; idempotencyKey: string } }
> = gql`
  mutation RefundPayment($input: RefundPaymentInput!) {
    refundPayment(input: $input) {
      ...RefundFields
    }
  }
  ${REFUND_FIELDS}
`;

export const REFUND_UPDATED: TypedDocumentNode<{ refundUpdated: RefundView }, { paymentId: string; refundId: string }> = gql`
  subscription RefundUpdated($paymentId: ID!, $refundId: ID!) {
    refundUpdated(paymentId: $paymentId, refundId: $refundId) {
      ...RefundFields
    }
  }
  ${REFUND_FIELDS}
`;

export type DataResource = 'ACCOUNTS' | 'CARDS';

export interface DataTaskView {
  id: string;
  taskId: string;
  resource: DataResource;
  status: 'QUEUED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED';
  accounts: { id: string; displayName: string }[] | null;
  cards: { id: string; displayName: string }[] | null;
}

const DATA_TASK_FIELDS = gql`
  fragment DataTaskFields on DataTask {
    id
    taskId
    resource
    status
    accounts {
      id
      displayName
    }
    cards {
      id
      displayName
    }
  }
`;

export const START_DATA_TASK: TypedDocumentNode<{ startDataTask: DataTaskView }, { input: { resource: DataResource } }> = gql`
  mutation StartDataTask($input: StartDataTaskInput!) {
    startDataTask(input: $input) {
      ...DataTaskFields
    }
  }
  ${DATA_TASK_FIELDS}
`;

export const DATA_TASK_UPDATED: TypedDocumentNode<{ dataTaskUpdated: DataTaskView }, { id: string }> = gql`
  subscription DataTaskUpdated($id: ID!) {
    dataTaskUpdated(id: $id) {
      ...DataTaskFields
    }
  }
  ${DATA_TASK_FIELDS}
`;
