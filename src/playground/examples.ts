/** The playground's preloaded tabs: one per main flow, runnable as they stand once signed in. */
export interface ExampleTab {
  query: string;
  variables?: string;
}

/** How the first tab says this page authenticates, in each identity mode (docs/identity.md). */
const WELCOME = {
  bank: `# Welcome to bankgraph. Sign in above (sandbox bank: john / doe), then press the run button.
# Your session cookie is sent with every request from this page, over HTTP and WebSocket alike.
`,
  app: `# Welcome to bankgraph. This gateway uses your app's own sign-in (app identity): it makes no sessions.
# Paste your app's access token into "Access token" above: every request from this page carries it as
# "Authorization: Bearer <token>", over HTTP and WebSocket alike. "Connect" links a bank to that token's user
# (POST /auth/connections; sandbox bank: john / doe). Then press the run button.
`,
};

const VIEWER_GRAPH = `query ViewerGraph($first: Int = 5) {
  viewer {
    accounts {
      id
      displayName
      currency
      accountNumber { iban sortCode number }
      balance { current available updatedAt }
      transactions(first: $first) {
        totalCount
        nodes { id timestamp description amount { amount currency } merchantName }
      }
    }
    cards {
      id
      displayName
      partialCardNumber
      balance { current creditLimit }
    }
    verifiedBeneficiaries { iban name verifiedAt }
    payouts { transactionId status amountInMinor currency }
  }
}
`;

/** The tabs after the first: the same in either identity mode. */
const FLOW_TABS: readonly ExampleTab[] = [
  {
    query: `# 1. Verify that a name holds one of your accounts: its IBAN becomes a verified beneficiary.
# 2. Pay out to that IBAN (copy one from verifyAccountHolder's report into the variables).
# Run each operation with the button's menu, or put the cursor in it and press Ctrl-Enter.
mutation VerifyAccountHolder($name: String!) {
  verifyAccountHolder(name: $name) {
    verified
    accountHolderName
    matchScore
    report { iban displayName verifiable accountHolders { name verified matchScore } }
  }
}

mutation CreatePayout($input: CreatePayoutInput!) {
  createPayout(input: $input) {
    transactionId
    status
    amountInMinor
    currency
    beneficiaryName
    beneficiaryIban
    authorisedAt
  }
}
`,
    variables: JSON.stringify(
      {
        name: 'John Doe',
        input: {
          amountInMinor: 100,
          currency: 'GBP',
          beneficiaryIban: '<an IBAN from the report>',
          beneficiaryName: 'John Doe',
          beneficiaryReference: 'playground payout',
        },
      },
      null,
      2,
    ),
  },
  {
    query: `# Watch a payout move authorised -> submitted -> settled (runs over WebSocket).
subscription PayoutUpdated($transactionId: ID!) {
  payoutUpdated(transactionId: $transactionId) {
    transactionId
    status
    authorisedAt
    submittedAt
    settledAt
    failedAt
    rejectedAt
  }
}
`,
    variables: JSON.stringify({ transactionId: '<transactionId from createPayout>' }, null, 2),
  },
  {
    query: `# Merchant operations need a merchant key: paste it into the "Merchant key" field above
# (MERCHANT_KEYS, or the one printed when the gateway started). Clear the field to act as yourself again.
query Payment($id: ID!) {
  payment(id: $id) {
    id
    paymentId
    refundedAmountInMinor
    refunds { id status amountInMinor currency reference createdAt executedAt failureReason }
  }
}

mutation RefundPayment($input: RefundPaymentInput!) {
  refundPayment(input: $input) {
    id
    paymentId
    status
    amountInMinor
    currency
    reference
    createdAt
  }
}

subscription RefundUpdated($paymentId: ID!) {
  refundUpdated(paymentId: $paymentId) { id status executedAt failureReason }
}
`,
    variables: JSON.stringify(
      { id: '<payment id>', paymentId: '<payment id>', input: { paymentId: '<payment id>', amountInMinor: 100, reference: 'playground' } },
      null,
      2,
    ),
  },
  {
    query: `# Start an asynchronous data fetch, then subscribe with its id: the result arrives by webhook.
mutation StartDataTask {
  startDataTask(input: { resource: ACCOUNTS }) { id status resource createdAt }
}

subscription DataTaskUpdated($id: ID!) {
  dataTaskUpdated(id: $id) {
    id
    status
    completedAt
    accounts { id displayName balance { current } }
  }
}
`,
    variables: JSON.stringify({ id: '<id from startDataTask>' }, null, 2),
  },
];

/** Bank identity's tabs (and the operations `npm run persist` and the fuzz test take from the playground). */
export const EXAMPLE_TABS: readonly ExampleTab[] = exampleTabs(false);

/** The playground's tabs: the first one says how this page authenticates (a session cookie, or the app's token). */
export function exampleTabs(appIdentity: boolean): readonly ExampleTab[] {
  return [{ query: `${appIdentity ? WELCOME.app : WELCOME.bank}${VIEWER_GRAPH}` }, ...FLOW_TABS];
}
