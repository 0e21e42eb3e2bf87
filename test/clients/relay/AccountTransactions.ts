import { graphql } from 'relay-runtime';

/*
 * Read by relay-compiler only (`npm run codegen` writes test/generated/relay/); the code imports the artifacts.
 * Viewer is refetchable through Query.viewer today. Once the schema has `Node`, a fragment on Account itself with
 * @refetchable is refetched through `node(id:)` with no other change to this pipeline.
 */

export const AccountTransactions = graphql`
  fragment AccountTransactions_viewer on Viewer
  @refetchable(queryName: "AccountTransactionsPageQuery")
  @argumentDefinitions(accountId: { type: "ID!" }, count: { type: "Int", defaultValue: 10 }, cursor: { type: "String" }) {
    account(id: $accountId) {
      id
      transactions(first: $count, after: $cursor) @connection(key: "AccountTransactions_transactions") {
        edges {
          node {
            id
            description
          }
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
    }
  }
`;

export const AccountTransactionsQuery = graphql`
  query AccountTransactionsQuery($accountId: ID!) {
    viewer {
      ...AccountTransactions_viewer @arguments(accountId: $accountId)
    }
  }
`;
