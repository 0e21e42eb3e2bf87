import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { relayStylePagination } from '@apollo/client/utilities';
import { OperationTypeNode } from 'graphql';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

/** The persisted-query hash, SHA-256 as lowercase hex, by Web Crypto: the same code in a browser bundle and in Node. */
export async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * Apollo Client 4 for bankgraph: queries and mutations over HTTP with APQ (their @defer and @stream payloads read as
 * multipart parts), subscriptions over graphql-ws.
 */
export function createApolloClient(
  gatewayUrl: string,
  sessionToken: string,
  fetchImpl: typeof fetch = fetch,
): { client: ApolloClient; close(): Promise<void> } {
  const authorization = `Bearer ${sessionToken}`;
  const http = new PersistedQueryLink({ sha256 }).concat(new HttpLink({ uri: `${gatewayUrl}/graphql`, headers: { authorization }, fetch: fetchImpl }));
  // In a browser, drop webSocketImpl: the global WebSocket is used, and the session cookie is sent on the upgrade.
  const ws = createClient({ url: `${gatewayUrl.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization } });
  const client = new ApolloClient({
    link: ApolloLink.split(({ operationType }) => operationType === OperationTypeNode.SUBSCRIPTION, new GraphQLWsLink(ws), http),
    cache: new InMemoryCache({
      typePolicies: {
        // `from` and `to` pick a list; `first` and `after` page through it.
        Account: { fields: { transactions: relayStylePagination(['from', 'to']) } },
        Card: { fields: { transactions: relayStylePagination(['from', 'to']) } },
      },
    }),
    // Asks for multipart/mixed;deferSpec=20220824 on operations that use @defer or @stream, and merges their payloads.
    incrementalHandler: new Defer20220824Handler(),
  });
  return {
    client,
    async close() {
      client.stop();
      await ws.dispose();
    },
  };
}

/**
 * Apollo Client 4 over HTTP alone: with no GraphQLWsLink, HttpLink sends a subscription with
 * `Accept: multipart/mixed;subscriptionSpec=1.0` and reads its results as parts of one long response, which passes
 * the proxies, CDNs and mobile networks that break WebSockets. The same APQ link; no WebSocket to open or close.
 */
export function createApolloHttpOnlyClient(gatewayUrl: string, sessionToken: string, fetchImpl: typeof fetch = fetch): { client: ApolloClient; close(): void } {
  const link = new PersistedQueryLink({ sha256 }).concat(
    new HttpLink({ uri: `${gatewayUrl}/graphql`, headers: { authorization: `Bearer ${sessionToken}` }, fetch: fetchImpl }),
  );
  const client = new ApolloClient({ link, cache: new InMemoryCache() });
  return { client, close: () => client.stop() };
}
