import { graphql } from 'relay-runtime';

/*
 * Read by relay-compiler only. A deferred fragment and a streamed list: relay-compiler gives each a label of its own
 * in the text it prints, which bankgraph sends back on the part that fills it.
 */

export const AccountBalance = graphql`
  fragment AccountBalances_balance on Account {
    balance {
      current
    }
  }
`;

export const AccountBalancesQuery = graphql`
  query AccountBalancesQuery {
    viewer {
      accounts @stream(initialCount: 1) {
        id
        displayName
        ...AccountBalances_balance @defer
      }
    }
  }
`;
