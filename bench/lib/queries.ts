/**
 * The nested query of test/operations/viewer.graphql (ViewerGraph): every account with its balance and a page of
 * transactions, every card with its balance and a page of transactions. Kept here as text so the bench does not
 * depend on the test suite's generated code.
 */
const ACCOUNT_FIELDS = `id type displayName currency
      accountNumber { iban number sortCode swiftBic }
      provider { id }
      updatedAt`;

const ACCOUNT_MONEY = `balance { currency available current overdraft updatedAt }
      transactions(first: $first) {
        totalCount
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        edges { cursor node { id } }
        nodes {
          id normalisedProviderTransactionId providerTransactionId timestamp description
          amount { amount currency }
          type category classification merchantName
          runningBalance { amount currency }
          meta { bankTransactionId providerTransactionCategory cardNumber location raw }
        }
      }`;

const CARD_FIELDS = `id network type currency displayName partialCardNumber nameOnCard validFrom validTo updatedAt
      provider { id }`;

const CARD_MONEY = `balance { currency available current creditLimit lastStatementBalance lastStatementDate paymentDue paymentDueDate updatedAt }
      transactions(first: $first) { totalCount nodes { id amount { amount currency } meta { cardNumber location raw } } }`;

export const VIEWER_GRAPH = `query ViewerGraph($first: Int) {
  viewer {
    accounts {
      ${ACCOUNT_FIELDS}
      ${ACCOUNT_MONEY}
    }
    cards {
      ${CARD_FIELDS}
      ${CARD_MONEY}
    }
  }
}`;

/**
 * ViewerGraph with every account's and card's balance and transactions deferred: the first payload is the two lists
 * (one provider round trip), the deferred fragments the rest. The same fields, so the merged answer is ViewerGraph's.
 */
export const VIEWER_GRAPH_DEFERRED = `query ViewerGraphDeferred($first: Int) {
  viewer {
    accounts {
      ${ACCOUNT_FIELDS}
      ... @defer(label: "accountMoney") {
      ${ACCOUNT_MONEY}
      }
    }
    cards {
      ${CARD_FIELDS}
      ... @defer(label: "cardMoney") {
      ${CARD_MONEY}
      }
    }
  }
}`;

export interface ViewerGraphData {
  viewer: {
    accounts: { id: string; balance: unknown; transactions: { totalCount: number; nodes: unknown[] } }[];
    cards: { id: string; balance: unknown; transactions: { totalCount: number; nodes: unknown[] } }[];
  };
}

/** The request body every client in the bench sends: same bytes for bankgraph, the naive gateway and the ceiling. */
export function viewerGraphBody(first: number): string {
  return JSON.stringify({ query: VIEWER_GRAPH, variables: { first } });
}

/** The deferred query's request body. */
export function viewerGraphDeferredBody(first: number): string {
  return JSON.stringify({ query: VIEWER_GRAPH_DEFERRED, variables: { first } });
}
