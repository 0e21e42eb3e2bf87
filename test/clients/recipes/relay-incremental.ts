import { createClient } from 'graphql-ws';
import {
  Environment,
  Network,
  Observable,
  RecordSource,
  Store,
  type GraphQLSingularResponse,
  type PayloadData,
  type PayloadError,
  type RequestParameters,
  type Variables,
} from 'relay-runtime';
import WebSocket from 'ws';

/** A payload as bankgraph sends it (deferSpec=20220824): `data` first, then `incremental` parts, `hasNext` on each. */
interface IncrementalPayload {
  data?: PayloadData | null;
  errors?: PayloadError[];
  extensions?: PayloadData;
  hasNext?: boolean;
  incremental?: { data?: PayloadData | null; items?: PayloadData[]; path: (string | number)[]; label?: string; errors?: PayloadError[] }[];
}

/**
 * Relay reads an incremental response as one `{data, label, path}` per deferred fragment and per streamed item (the
 * item's index ending its path), and knows the operation is over when the network completes: each `incremental` part
 * becomes such a response, each of a part's `items` one of its own.
 */
export function toRelayResponses(payload: IncrementalPayload): GraphQLSingularResponse[] {
  // The first payload (or an operation answered in one) as it is; a closing `{"hasNext": false}` alone says nothing more.
  if (!payload.incremental) return payload.data !== undefined || payload.errors ? [payload as GraphQLSingularResponse] : [];
  return payload.incremental.flatMap(({ data, items, path, label, errors }): GraphQLSingularResponse[] => {
    // A fragment an error nulled keeps its errors: Relay fails the whole operation on a response with no data.
    if (!items) return [{ data: data ?? {}, label, path, errors }];
    const list = path.slice(0, -1);
    const start = Number(path.at(-1));
    return items.map((item, offset) => ({ data: item, label, path: [...list, start + offset], errors }));
  });
}

/**
 * A Relay environment whose queries go over graphql-ws, every payload of a @defer or @stream handed to Relay as it
 * arrives (subscriptions too: one `next` each).
 */
export function createRelayIncrementalEnvironment(gatewayUrl: string, sessionToken: string): { environment: Environment; close(): Promise<void> } {
  const ws = createClient({
    url: `${gatewayUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${sessionToken}` },
  });
  const execute = (operation: RequestParameters, variables: Variables) =>
    Observable.create<GraphQLSingularResponse>((sink) =>
      ws.subscribe(
        { operationName: operation.name, query: operation.text ?? '', variables },
        {
          next: (payload) => {
            for (const response of toRelayResponses(payload as IncrementalPayload)) sink.next(response);
          },
          error: (error) => sink.error(error as Error),
          complete: () => sink.complete(),
        },
      ),
    );
  const environment = new Environment({ network: Network.create(execute, execute), store: new Store(new RecordSource()) });
  return { environment, close: async () => await ws.dispose() };
}
