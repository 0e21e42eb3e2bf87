import { graphql } from 'relay-runtime';

/*
 * Read by relay-compiler only (`npm run codegen` writes test/generated/relay/); the code imports the artifacts.
 * Account implements Node, so @refetchable makes relay-compiler write a query that refetches the fragment through
 * `node(id:)`: usePaginationFragment's loadNext sends it with the account's id and the end cursor.
 */

export const AccountTransactions = graphql`
  fragment AccountTransactions_account on Account
  @refetchable(queryName: "AccountTransactionsPageQuery")
  @argumentDefinitions(count: { type: "Int", defaultValue: 10 }, cursor: { type: "String" }) {
    id
    transactions(first: $count, after: $cursor) @connection(key: "AccountTransactions_transactions") {
      edges {
        node {
          id
          transactionId
          description
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`;

export const AccountTransactionsQuery = graphql`
  query AccountTransactionsQuery($accountId: ID!) {
    viewer {
      account(id: $accountId) {
        ...AccountTransactions_account
      }
    }
  }
`;
