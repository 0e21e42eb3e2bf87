import { Client, fetchExchange, subscriptionExchange } from '@urql/core';
import { cacheExchange } from '@urql/exchange-graphcache';
import { createClient } from 'graphql-sse';

/** bankgraph's object types without an `id`: values that belong to the object that holds them. */
export const VALUE_TYPES = [
  'AccountBalance',
  'AccountHolder',
  'AccountNumber',
  'AccountReport',
  'CardBalance',
  'Money',
  'PageInfo',
  'TransactionConnection',
  'TransactionEdge',
  'TransactionMeta',
  'VerificationResult',
];

/** urql 6 for bankgraph: graphcache normalising by `id`, subscriptions over Server-Sent Events (graphql-sse). */
export function createUrqlClient(gatewayUrl: string, sessionToken: string, fetchImpl: typeof fetch = fetch): { client: Client; close(): Promise<void> } {
  const authorization = `Bearer ${sessionToken}`;
  // One stream per subscription ("distinct connections"); in a browser signed in with the session cookie, drop `headers`.
  const sse = createClient({ url: `${gatewayUrl}/graphql/stream`, headers: { authorization } });
  const client = new Client({
    url: `${gatewayUrl}/graphql`,
    // urql sends queries as GET by default; bankgraph's CSRF prevention wants a POST with JSON (or a preflight header).
    preferGetMethod: false,
    fetchOptions: { headers: { authorization } },
    fetch: fetchImpl,
    exchanges: [
      // Every object with an identity has a global `id`, which graphcache keys it by; these have none, so they are
      // kept inside the object that holds them (graphcache warns of any type it cannot key).
      cacheExchange({ keys: Object.fromEntries(VALUE_TYPES.map((type) => [type, () => null])) }),
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: sse.subscribe({ ...request, query: request.query ?? '' }, sink) }),
        }),
      }),
    ],
  });
  return { client, close: async () => sse.dispose() };
}
