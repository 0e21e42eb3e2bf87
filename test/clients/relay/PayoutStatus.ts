import { graphql } from 'relay-runtime';

/* Read by relay-compiler only (`npm run codegen` writes test/generated/relay/); the code imports the artifacts. */

export const PayoutStatusQuery = graphql`
  query PayoutStatusQuery {
    viewer {
      payouts {
        id
        transactionId
        status
      }
    }
  }
`;

export const PayoutStatusSubscription = graphql`
  subscription PayoutStatusSubscription($transactionId: ID!) {
    payoutUpdated(transactionId: $transactionId) {
      id
      status
    }
  }
`;
