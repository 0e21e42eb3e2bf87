import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { GraphQLError } from 'graphql';
import type { ErrorCode } from '../errors/gateway-errors';

export const SUBSCRIPTIONS_OVER_HTTP_MESSAGE =
  'Subscriptions are not served over plain HTTP: open a WebSocket to /graphql with the graphql-transport-ws ' +
  'subprotocol (the graphql-ws client) and subscribe there. Queries and mutations work over HTTP as before.';

/**
 * A subscription sent as an ordinary HTTP request would run its resolvers as if it were a query, which no
 * subscription field supports: it is refused here, with 400, before anything runs, and logged as a refusal (info),
 * not as a fault. This is the one place that decides which HTTP requests may carry a subscription: streamed answers
 * (`Accept: multipart/mixed; subscriptionSpec=...` or `text/event-stream`) are not served yet, so today it admits
 * none; serving them means letting those Accept values through here.
 */
export function httpSubscriptionPlugin<TContext extends BaseContext>(): ApolloServerPlugin<TContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation }) {
          if (operation?.operation !== 'subscription') return;
          throw new GraphQLError(SUBSCRIPTIONS_OVER_HTTP_MESSAGE, {
            extensions: { code: 'BAD_USER_INPUT' satisfies ErrorCode, http: { status: 400 } },
          });
        },
      };
    },
  };
}
