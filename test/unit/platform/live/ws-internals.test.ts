import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { buildSchema } from 'graphql';
import { GRAPHQL_TRANSPORT_WS_PROTOCOL } from 'graphql-ws';
import WebSocket, { WebSocketServer } from 'ws';
import { createLogger } from '../../../../src/platform/observability/logger';
import { ORDINARY_FAN_OUT } from '../../../../src/platform/live/fan-out';
import { wsInternalsAsExpected } from '../../../../src/platform/live/next-frame';
import { serveGraphqlWs, WS_INTERNALS_CHANGED } from '../../../../src/platform/live/ws-transport';

/** What next-frame.ts reads of a server-side ws socket. */
interface Internals {
  _socket?: unknown;
  _sender?: { _state?: unknown; _queue?: unknown };
}

/** Fails with what to do: the WebSocket fast path writes frames past ws through exactly these private fields. */
function expectWs(condition: boolean, what: string): void {
  if (condition) return;
  throw new Error(
    `ws changed: ${what}. src/platform/live/next-frame.ts writes frames past ws through its private fields (_socket, _sender._state, _sender._queue): ` +
      're-check it against this ws and pin the version it was checked with in package.json. Meanwhile FAST_PATHS=off sends every frame through ws.send.',
  );
}

async function serverSocket(perMessageDeflate = false): Promise<{ server: WebSocket; close(): Promise<void> }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const accepted = new Promise<WebSocket>((resolve) => wss.once('connection', resolve));
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, { perMessageDeflate });
  await new Promise<void>((resolve) => client.once('open', () => resolve()));
  return {
    server: await accepted,
    async close() {
      client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

describe('the ws internals the WebSocket fast path reads', () => {
  it('are those of the ws version package.json pins, exactly', () => {
    const declared = (JSON.parse(readFileSync(join(__dirname, '../../../../package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies
      .ws;
    const installed = (JSON.parse(readFileSync(require.resolve('ws/package.json'), 'utf8')) as { version: string }).version;
    expectWs(declared === '8.23.0', `package.json declares ws ${declared}, not the exact 8.23.0 next-frame.ts was checked against`);
    expectWs(installed === declared, `ws ${installed} is installed where package.json pins ${declared}`);
  });

  it('exist with the types next-frame.ts expects on an idle socket: its TCP socket, the sender idle (0) with an empty queue', async () => {
    const { server, close } = await serverSocket();
    try {
      const { _socket: raw, _sender: sender } = server as unknown as Internals;
      expectWs(raw instanceof Socket, 'WebSocket._socket is not the net.Socket under it');
      expectWs(typeof sender === 'object' && sender !== null, 'WebSocket._sender is not an object');
      expectWs(sender!._state === 0, `an idle Sender's _state is ${String(sender!._state)}, not 0`);
      expectWs(Array.isArray(sender!._queue) && sender!._queue.length === 0, "an idle Sender's _queue is not an empty array");
      expect(wsInternalsAsExpected(server)).toBe(true);
    } finally {
      await close();
    }
  });

  it('mean what next-frame.ts takes them to: a compressing sender leaves _state and queues what is sent meanwhile', async () => {
    const { server, close } = await serverSocket(true);
    try {
      const sender = (server as unknown as Internals)._sender!;
      server.send('x'.repeat(16 * 1024));
      expectWs(sender._state !== 0, 'a Sender compressing a message still says _state 0 (idle)');
      server.send('y'.repeat(16 * 1024));
      expectWs(Array.isArray(sender._queue) && sender._queue.length > 0, 'a message sent while the Sender compresses is not in its _queue');
    } finally {
      await close();
    }
  });
});

describe('serveGraphqlWs when ws lacks those fields', () => {
  it.each([
    ['warns once, and still speaks graphql-ws through ws.send', undefined, 1],
    ['says nothing with the ordinary fan-out, which never reads them', ORDINARY_FAN_OUT, 0],
  ])('%s', async (_case, fanOut, warnings) => {
    const server = createServer();
    const wsServer = new WebSocketServer({ server, path: '/graphql' });
    // Runs before serveGraphqlWs's own listener: the socket it sees has no _sender._queue.
    wsServer.on('connection', (socket) => {
      (socket as unknown as Internals)._sender!._queue = undefined;
    });
    const logger = createLogger('silent');
    const warn = jest.spyOn(logger, 'warn');
    const transport = serveGraphqlWs({ schema: buildSchema('type Query { hello: String }') }, wsServer, { logger, production: true, fanOut });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
    const sockets: WebSocket[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const socket = new WebSocket(url, GRAPHQL_TRANSPORT_WS_PROTOCOL);
        sockets.push(socket);
        await new Promise((resolve, reject) => {
          socket.once('open', resolve);
          socket.once('error', reject);
        });
        const ack = new Promise<string>((resolve) => socket.once('message', (data) => resolve(String(data))));
        socket.send(JSON.stringify({ type: 'connection_init' }));
        expect(JSON.parse(await ack)).toEqual({ type: 'connection_ack' });
      }
      expect(warn.mock.calls.filter(([message]) => message === WS_INTERNALS_CHANGED)).toHaveLength(warnings);
    } finally {
      for (const socket of sockets) socket.terminate();
      await transport.dispose();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
