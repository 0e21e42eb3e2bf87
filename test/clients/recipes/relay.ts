import { createClient } from 'graphql-ws';
import { Environment, Network, Observable, RecordSource, Store, type FetchFunction, type GraphQLResponse, type SubscribeFunction } from 'relay-runtime';
import WebSocket from 'ws';

/** A Relay environment for bankgraph: artifacts from relay-compiler, operations over HTTP, subscriptions over graphql-ws. */
export function createRelayEnvironment(gatewayUrl: string, sessionToken: string): { environment: Environment; close(): Promise<void> } {
  const authorization = `Bearer ${sessionToken}`;
  const ws = createClient({ url: `${gatewayUrl.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization } });
  const fetchFunction: FetchFunction = async (operation, variables) => {
    const response = await fetch(`${gatewayUrl}/graphql`, {
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
  const environment = new Environment({
    network: Network.create(fetchFunction, subscribeFunction),
    store: new Store(new RecordSource()),
    // Ids are unique only within their type until the schema has Node ids, and Payout has no `id` yet.
    getDataID: (value, typeName) => {
      const id = typeName === 'Payout' ? value.transactionId : value.id;
      return id == null ? undefined : `${typeName}:${String(id)}`;
    },
  });
  return { environment, close: async () => await ws.dispose() };
}
