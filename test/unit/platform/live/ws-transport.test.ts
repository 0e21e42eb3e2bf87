import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSchema } from 'graphql';
import { GRAPHQL_TRANSPORT_WS_PROTOCOL } from 'graphql-ws';
import WebSocket, { WebSocketServer } from 'ws';
import { createLogger } from '../../../../src/platform/observability/logger';
import { serveGraphqlWs, type SocketConnection } from '../../../../src/platform/live/ws-transport';

const schema = buildSchema('type Query { hello: String }');
const KEEP_ALIVE_MS = 240;
const INIT_WAIT_MS = 300;

describe('serveGraphqlWs', () => {
  let server: Server;
  let transport: { dispose(): Promise<void> };
  let url: string;
  const connected: SocketConnection[] = [];

  beforeEach(async () => {
    connected.length = 0;
    server = createServer();
    const wsServer = new WebSocketServer({ server, path: '/graphql' });
    transport = serveGraphqlWs(
      {
        schema,
        roots: { query: { hello: () => 'world' } },
        onConnect: (ctx) => {
          connected.push(ctx.extra);
          return true;
        },
      },
      wsServer,
      { logger: createLogger('silent'), production: true, keepAliveMs: KEEP_ALIVE_MS, connectionInitWaitMs: INIT_WAIT_MS },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  });

  afterEach(async () => {
    await transport.dispose();
    await new Promise((resolve) => server.close(resolve));
  });

  /** A raw client: sends connection_init and resolves once acknowledged. */
  async function open(options: WebSocket.ClientOptions = {}): Promise<WebSocket> {
    const socket = new WebSocket(url, GRAPHQL_TRANSPORT_WS_PROTOCOL, { headers: { origin: 'https://app.example', cookie: 'a=b' }, ...options });
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    socket.send(JSON.stringify({ type: 'connection_init' }));
    await new Promise<void>((resolve) => socket.once('message', () => resolve()));
    return socket;
  }

  it('runs the protocol: ack, then an operation answered with next and complete', async () => {
    const socket = await open();
    const messages: unknown[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(String(data))));
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ hello }' } }));
    await waitFor(() => messages.length === 2);
    expect(messages).toEqual([
      { id: '1', type: 'next', payload: { data: { hello: 'world' } } },
      { id: '1', type: 'complete' },
    ]);
    socket.close();
  });

  it('keeps the upgrade headers it needs and the peer address, not the request', async () => {
    const socket = await open();
    expect(connected).toHaveLength(1);
    expect(connected[0]!.headers).toEqual({ origin: 'https://app.example', cookie: 'a=b', host: expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
    expect(connected[0]!.remoteAddress).toBe('127.0.0.1');
    expect(Object.values(connected[0]!).some((value) => value?.constructor?.name === 'IncomingMessage')).toBe(false);
    socket.close();
  });

  it('terminates a socket that does not answer a ping by the next one, and keeps one that does', async () => {
    const silent = await open({ autoPong: false });
    const answering = await open();
    let pings = 0;
    answering.on('ping', () => (pings += 1));
    const closed = new Promise<number>((resolve) => silent.once('close', (code) => resolve(code)));
    // Pinged within one period, terminated one period later (1006: no close frame).
    expect(await closed).toBe(1006);
    await new Promise((resolve) => setTimeout(resolve, KEEP_ALIVE_MS));
    expect(pings).toBeGreaterThanOrEqual(2);
    expect(answering.readyState).toBe(WebSocket.OPEN);
    answering.close();
  });

  it('closes a socket that sends no connection_init within the wait (4408), and not one that did', async () => {
    const initialised = await open();
    const silent = new WebSocket(url, GRAPHQL_TRANSPORT_WS_PROTOCOL);
    const opened = Date.now();
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      silent.once('close', (code, reason) => resolve({ code, reason: String(reason) })),
    );
    expect(await closed).toEqual({ code: 4408, reason: 'Connection initialisation timeout' });
    expect(Date.now() - opened).toBeGreaterThanOrEqual(INIT_WAIT_MS - 20);
    await new Promise((resolve) => setTimeout(resolve, INIT_WAIT_MS));
    expect(initialised.readyState).toBe(WebSocket.OPEN);
    initialised.close();
  });

  it('closes an unacknowledged socket when the first operation arrives without connection_init (4401)', async () => {
    const socket = new WebSocket(url, GRAPHQL_TRANSPORT_WS_PROTOCOL);
    await new Promise((resolve) => socket.once('open', resolve));
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ hello }' } }));
    expect(await closed).toBe(4401);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
