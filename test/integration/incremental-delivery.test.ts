import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import WebSocket from 'ws';
import { timedPayloads } from '../helpers/deferred-client';
import { injectFault } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';

const DEFERRED = `query Deferred {
  viewer { accounts { id displayName ... @defer(label: "money") { balance { current } transactions(first: 2) { nodes { id } } } } }
}`;

interface Payload {
  data?: { viewer?: { accounts?: { id: string; displayName: string }[] } };
  errors?: { message: string; extensions?: Record<string, unknown> }[];
  hasNext?: boolean;
  incremental?: { data?: Record<string, unknown>; path?: (string | number)[]; label?: string; errors?: unknown[] }[];
}

/** The answer's payloads over HTTP, each timed, read as Payloads. */
async function multipart(
  url: string,
  token: string,
  query: string,
  accept: string,
): Promise<{ contentType: string; parts: { at: number; payload: Payload }[] }> {
  const { contentType, parts } = await timedPayloads(url, token, query, { accept });
  return { contentType, parts: parts.map(({ at, payload }) => ({ at, payload: payload as Payload })) };
}

describe('@defer and @stream', () => {
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_PER_SECOND: '0' } });
    token = await stack.signIn('john', 'doe');
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('answers the account list first over multipart HTTP, then the deferred balances and transactions', async () => {
    await injectFault(stack, { match: 'GET /data/v1/accounts/*/balance', latencyMs: 400 });
    try {
      const { contentType, parts } = await multipart(stack.gateway.url, token, DEFERRED, 'multipart/mixed;deferSpec=20220824,application/json');
      expect(contentType).toContain('deferSpec=20220824');
      const [first, ...rest] = parts;
      expect(first!.payload.hasNext).toBe(true);
      expect(first!.payload.data?.viewer?.accounts?.length).toBeGreaterThan(0);
      expect(JSON.stringify(first!.payload)).not.toContain('balance');
      expect(rest.at(-1)!.payload.hasNext).toBe(false);
      const deferred = rest.flatMap((part) => part.payload.incremental ?? []);
      expect(deferred).toHaveLength(first!.payload.data!.viewer!.accounts!.length);
      expect(deferred.every((part) => part.label === 'money' && part.data && 'balance' in part.data)).toBe(true);
      expect(rest.at(-1)!.at - first!.at).toBeGreaterThan(300);
    } finally {
      await stack.sandboxJson('DELETE', '/sandbox/faults');
    }
  });

  it('answers in one when the client does not accept multipart', async () => {
    const { contentType, parts } = await multipart(stack.gateway.url, token, DEFERRED, 'application/json');
    expect(contentType).toContain('application/json');
    expect(parts).toHaveLength(1);
    expect(JSON.stringify(parts[0]!.payload.data)).toContain('balance');
  });

  it('sends the payloads as successive next messages over WebSocket and SSE', async () => {
    const url = stack.gateway.url;
    const ws = createWsClient({
      url: url.replace('http', 'ws') + '/graphql',
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
      retryAttempts: 0,
    });
    const sse = createSseClient({ url: `${url}/graphql/stream`, headers: { authorization: `Bearer ${token}` }, retryAttempts: 0 });
    try {
      for (const client of [ws, sse]) {
        const payloads: Payload[] = [];
        for await (const payload of client.iterate({ query: DEFERRED })) payloads.push(payload as Payload);
        expect(payloads[0]!.hasNext).toBe(true);
        expect(payloads.at(-1)!.hasNext).toBe(false);
        expect(payloads.flatMap((payload) => payload.incremental ?? []).length).toBe(payloads[0]!.data!.viewer!.accounts!.length);
      }
    } finally {
      await ws.dispose();
      sse.dispose();
    }
  });

  it('refuses @stream on a field that is not a list, saying which field', async () => {
    const { parts } = await multipart(stack.gateway.url, token, 'query { viewer { id @stream } }', 'application/json');
    expect(parts[0]!.payload.errors?.[0]?.message).toMatch(/@stream is allowed on list fields only: Viewer\.id/);
    expect(parts[0]!.payload.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'GRAPHQL_VALIDATION_FAILED' });
  });
});
