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
    payouts { transactionId state amountInMinor currency }
  }
}
`;

/** Ids the tabs' variables are filled in with where the gateway knows them (docs/playground.md). */
export interface ExampleSeed {
  /** A payment the sandbox seeded; with a remote provider there is none to name. */
  paymentId?: string;
}

/** What the Payment tab's variables hold without a seeded payment: where to get a real id. */
export const PAYMENT_ID_PLACEHOLDER = '<a payment id of your merchant account>';

/** The tabs after the first: the same in either identity mode. */
const flowTabs = (seed: ExampleSeed): readonly ExampleTab[] => [
  {
    query: `# 1. Verify that a name holds one of your accounts: its IBAN becomes a verified beneficiary.
# 2. Pay out to that IBAN (copy one from verifyAccountHolder's report into the variables). Each run gets a
#    fresh transactionId unless the variables name one; one already used answers its earlier payout.
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
    state
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
    query: `# Watch a payout move AUTHORISED -> SUBMITTED -> SETTLED (runs over WebSocket).
subscription PayoutUpdated($transactionId: ID!) {
  payoutUpdated(transactionId: $transactionId) {
    transactionId
    state
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
    variables: paymentVariables(seed.paymentId ?? PAYMENT_ID_PLACEHOLDER),
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
  {
    query: `# @defer: the accounts come first; each account's balance and its transactions follow in later payloads,
# as the bank answers. The line in the bar above lists the payloads as they arrive (over HTTP, as
# multipart/mixed); the response pane shows them merged.
query AccountsDeferred($first: Int = 5) {
  viewer {
    accounts {
      id
      displayName
      currency
      ... @defer(label: "balance") {
        balance { current available updatedAt }
      }
      ... @defer(label: "transactions") {
        transactions(first: $first) {
          totalCount
          nodes { id timestamp description amount { amount currency } }
        }
      }
    }
  }
}
`,
  },
];

// No idempotencyKey: the playground's client makes a fresh one for each run (playground.client.js).
function paymentVariables(paymentId: string): string {
  return JSON.stringify({ id: paymentId, paymentId, input: { paymentId, amountInMinor: 100, reference: 'playground' } }, null, 2);
}

/** Bank identity's tabs (and the operations `npm run persist` and the fuzz test take from the playground). */
export const EXAMPLE_TABS: readonly ExampleTab[] = exampleTabs(false);

/**
 * The playground's tabs: the first one says how this page authenticates (a session cookie, or the app's token);
 * `seed` fills the ids the gateway knows into their variables.
 */
export function exampleTabs(appIdentity: boolean, seed: ExampleSeed = {}): readonly ExampleTab[] {
  return [{ query: `${appIdentity ? WELCOME.app : WELCOME.bank}${VIEWER_GRAPH}` }, ...flowTabs(seed)];
}
