import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { GraphQLError } from 'graphql';
import type { ErrorCode } from '../errors/gateway-errors';

export const SUBSCRIPTIONS_OVER_HTTP_MESSAGE =
  'Subscriptions are not served over plain HTTP. Subscribe over a WebSocket to /graphql (the graphql-transport-ws ' +
  'subprotocol, the graphql-ws client), over Server-Sent Events at /graphql/stream (the graphql-sse protocol, ' +
  'Accept: text/event-stream), or on /graphql with Accept: multipart/mixed;subscriptionSpec="1.0" (Apollo\'s ' +
  'multipart subscriptions). Queries and mutations work over HTTP as before.';

/** Whether a request's Accept asks for Apollo's multipart subscriptions (whatever else it lists, in any case). */
export function acceptsMultipartSubscription(accept: string | undefined): boolean {
  return accept !== undefined && accept.split(',').some((type) => /^\s*multipart\/mixed\b/i.test(type) && /;\s*subscriptionSpec\s*=/i.test(type));
}

/**
 * Whether a request's Accept takes an operation's payloads as `multipart/mixed; deferSpec=20220824` (Apollo Client's
 * Defer20220824Handler sends the parameter; urql and plain fetch clients list `multipart/mixed` bare). Without it,
 * or with only another format's parameter, an operation using @defer or @stream is answered in one, as Apollo answers it.
 */
export function acceptsMultipartIncremental(accept: string | undefined): boolean {
  return (
    accept !== undefined &&
    accept.split(',').some((type) => {
      if (!/^\s*multipart\/mixed\s*(;|$)/i.test(type) || /;\s*subscriptionSpec\s*=/i.test(type)) return false;
      const spec = /;\s*deferSpec\s*=\s*"?([^";,\s]*)/i.exec(type)?.[1];
      // incrementalSpec=v0.2 is graphql-js 17's later format (pending and completed ids), which this gateway does not write.
      if (spec === undefined) return !/;\s*incrementalSpec\s*=/i.test(type);
      return spec === '20220824';
    })
  );
}

/**
 * A subscription sent as an ordinary HTTP request would run its resolvers as if it were a query, which no
 * subscription field supports: it is refused here, with 400, before anything runs, and logged as a refusal (info),
 * not as a fault. Which requests on /graphql may carry a subscription is decided by acceptsMultipartSubscription:
 * the HTTP handler streams those before Apollo sees them (src/platform/live/multipart-subscriptions.ts), so a
 * subscription that reaches Apollo is a plain request; Server-Sent Events have their own path, /graphql/stream.
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
