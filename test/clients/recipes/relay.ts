import { createClient } from 'graphql-ws';
import { Environment, Network, Observable, RecordSource, Store, type FetchFunction, type GraphQLResponse, type SubscribeFunction } from 'relay-runtime';
import WebSocket from 'ws';

/**
 * A Relay environment for bankgraph: artifacts from relay-compiler, operations over HTTP, subscriptions over graphql-ws.
 * Every object's `id` is a global id (Node), so Relay's default store keys and `node(id:)` refetches need no configuration.
 */
export function createRelayEnvironment(
  gatewayUrl: string,
  sessionToken: string,
  fetchImpl: typeof fetch = fetch,
): { environment: Environment; close(): Promise<void> } {
  const authorization = `Bearer ${sessionToken}`;
  const ws = createClient({ url: `${gatewayUrl.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization } });
  const fetchFunction: FetchFunction = async (operation, variables) => {
    const response = await fetchImpl(`${gatewayUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({ operationName: operation.name, query: operation.text, variables }),
    });
    return (await response.json()) as GraphQLResponse;
  };
  const subscribeFunction: SubscribeFunction = (operation, variables) =>
    Observable.create<GraphQLResponse>((sink) =>
      ws.subscribe(
        { operationName: operation.name, query: operation.text ?? '', variables },
        { next: (result) => sink.next(result as GraphQLResponse), error: (error) => sink.error(error as Error), complete: () => sink.complete() },
      ),
    );
  const environment = new Environment({ network: Network.create(fetchFunction, subscribeFunction), store: new Store(new RecordSource()) });
  return { environment, close: async () => await ws.dispose() };
}
