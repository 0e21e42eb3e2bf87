import { createClient as createSseClient, type Client as SseClient } from 'graphql-sse';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import WebSocket from 'ws';
import { useClientStack } from './client-stack';

/*
 * graphql-ws's and graphql-sse's own clients reading bankgraph's @defer and @stream payloads: each payload one `next`
 * message (WebSocket) or `next` event (SSE), in the deferSpec=20220824 shape, the last with `hasNext: false`.
 */

// #region ws-sse-query
const STREAMED_ACCOUNTS = /* GraphQL */ `
  query StreamedAccounts {
    viewer {
      accounts @stream(initialCount: 1, label: "accounts") {
        id
        ... @defer(label: "balance") {
          balance {
            current
          }
        }
      }
    }
  }
`;
// #endregion ws-sse-query

interface Payload {
  data?: { viewer: { accounts: { id: string; balance?: unknown }[] } };
  errors?: unknown[];
  hasNext: boolean;
  incremental?: { data?: Record<string, unknown>; items?: { id: string }[]; path: (string | number)[]; label?: string }[];
}

describe('graphql-ws and graphql-sse reading @defer and @stream', () => {
  const current = useClientStack();
  const disposers: (() => Promise<void> | void)[] = [];

  function clients(): { name: string; client: WsClient | SseClient }[] {
    const gatewayUrl = current().stack.gateway.url;
    const authorization = `Bearer ${current().session}`;
    // #region ws-sse-clients
    const ws = createWsClient({ url: `${gatewayUrl.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization } });
    const sse = createSseClient({ url: `${gatewayUrl}/graphql/stream`, headers: { authorization } });
    // #endregion ws-sse-clients
    disposers.push(
      () => ws.dispose(),
      () => sse.dispose(),
    );
    return [
      { name: 'graphql-ws', client: ws },
      { name: 'graphql-sse', client: sse },
    ];
  }

  afterEach(async () => {
    await Promise.all(disposers.splice(0).map((dispose) => dispose()));
  });

  it('sends the first account, the others as streamed items at their index, and every balance in later parts', async () => {
    const accounts = current().john.accounts.length;
    expect(accounts).toBeGreaterThan(1);
    for (const { name, client } of clients()) {
      const payloads: Payload[] = [];
      // #region ws-sse-iterate
      for await (const payload of client.iterate({ query: STREAMED_ACCOUNTS })) {
        payloads.push(payload as Payload);
      }
      // #endregion ws-sse-iterate
      const [first, ...rest] = payloads;
      expect({ name, hasNext: first!.hasNext, accounts: first!.data?.viewer.accounts }).toEqual({
        name,
        hasNext: true,
        accounts: [{ id: expect.any(String) }],
      });
      expect(rest.map((payload) => payload.hasNext)).toEqual([...rest.slice(1).map(() => true), false]);
      const parts = rest.flatMap((payload) => payload.incremental ?? []);

      // Each streamed part's path ends with the index its items start at in the list.
      const streamed = parts.filter((part) => 'items' in part);
      const items = streamed.flatMap((part) => part.items!.map((item, offset) => ({ index: Number(part.path.at(-1)) + offset, item })));
      expect(items.map(({ index }) => index)).toEqual(Array.from({ length: accounts - 1 }, (_, index) => index + 1));
      expect(streamed.every((part) => part.label === 'accounts' && part.path.slice(0, -1).join('.') === 'viewer.accounts')).toBe(true);
      const ids = [first!.data!.viewer.accounts[0]!.id, ...items.map(({ item }) => item.id)];
      expect(new Set(ids).size).toBe(accounts);

      // One deferred balance per account, streamed or not, at the account's own index.
      const deferred = parts.filter((part) => 'data' in part);
      expect(deferred.map((part) => part.path).sort()).toEqual(ids.map((_, index) => ['viewer', 'accounts', index]).sort());
      expect(deferred.every((part) => part.label === 'balance' && typeof (part.data as { balance: { current: unknown } }).balance.current === 'string')).toBe(
        true,
      );
    }
  });
});
