import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { relayStylePagination } from '@apollo/client/utilities';
import { OperationTypeNode } from 'graphql';
import { createClient } from 'graphql-ws';

/** How a client proves who it is: the session cookie the sign-in set, or a token held in memory. */
export type Auth = { kind: 'cookie' } | { kind: 'bearer'; token: string };

// #region sha256
/** The persisted-query hash, SHA-256 as lowercase hex, by Web Crypto (no Node built-in in a browser bundle). */
export async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
// #endregion sha256

// #region client
/** Apollo Client 4 in the browser: HTTP with APQ for queries and mutations, graphql-ws for subscriptions. */
export function createApolloClient(gatewayUrl: string, auth: Auth): { client: ApolloClient; close(): void } {
  const headers = auth.kind === 'bearer' ? { authorization: `Bearer ${auth.token}` } : undefined;
  const http = new PersistedQueryLink({ sha256 }).concat(
    // A cookie session needs `credentials: 'include'` on another origin; a bearer token needs no cookie at all.
    new HttpLink({ uri: `${gatewayUrl}/graphql`, credentials: auth.kind === 'cookie' ? 'include' : 'omit', headers }),
  );
  // The browser's WebSocket sends the site's cookies on the upgrade by itself; a token goes in connectionParams.
  const ws = createClient({ url: `${gatewayUrl.replace(/^http/, 'ws')}/graphql`, connectionParams: headers, lazy: true });
  const client = new ApolloClient({
    link: ApolloLink.split(({ operationType }) => operationType === OperationTypeNode.SUBSCRIPTION, new GraphQLWsLink(ws), http),
    cache: new InMemoryCache({
      typePolicies: {
        // `from` and `to` pick a list; `first` and `after` page through it, and fetchMore appends the next page.
        Account: { fields: { transactions: relayStylePagination(['from', 'to']) } },
      },
    }),
  });
  return {
    client,
    close() {
      client.stop();
      void ws.dispose();
    },
  };
}
// #endregion client
