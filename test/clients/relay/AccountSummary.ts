import { graphql } from 'relay-runtime';

/*
 * Read by relay-compiler only. A @refetchable fragment on a Node type: useRefetchableFragment's refetch() sends the
 * generated AccountSummaryRefetchQuery, `node(id: $id) { ...AccountSummary_account }`.
 */

export const AccountSummary = graphql`
  fragment AccountSummary_account on Account @refetchable(queryName: "AccountSummaryRefetchQuery") {
    id
    accountId
    displayName
    balance {
      available
      current
    }
  }
`;

export const AccountSummaryQuery = graphql`
  query AccountSummaryQuery {
    viewer {
      accounts {
        ...AccountSummary_account
      }
    }
  }
`;
