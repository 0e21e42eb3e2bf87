import { createHash } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { messageBytes, MULTIPART_BOUNDARY, multipartPart, sseNextEvent, wsNextFrame } from '../lib/fan-out-wire';
import { listenOnLoopback } from '../lib/loopback-server';
import { monotonicMs, type Transport } from '../lib/subscribers';
import { runChild } from './child.runtime';

export interface FanOutFloorInit {
  transport: Transport;
  /** The result every subscriber gets when it subscribes (the refund's current state, as bankgraph answers it). */
  first: object;
}

export interface BroadcastArgs {
  result: object;
}

export interface Broadcast {
  /** On the machine's monotonic clock (monotonicMs), just before the first write. */
  atMs: number;
  sockets: number;
}

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** A close frame with status 1000, the floor's answer to a client's. */
const WS_CLOSE = Buffer.from([0x88, 0x02, 0x03, 0xe8]);

/**
 * Scenario 9's floor: the least any server must do to deliver one message to many subscribers of one transport. It
 * answers each subscriber's opening with only what the bench's clients require (WebSocket: the 101, then
 * connection_ack to the first message and the first `next` to the second; SSE and multipart: the 200 and the first
 * result), then, on `broadcast`, writes the bytes bankgraph writes for one result (fan-out-wire.ts, built once) to
 * every socket, one write each. No GraphQL, no pubsub, no per-subscriber filtering, serialization or framing: what
 * a gateway spends per delivered message beyond this is what its subscription machinery costs.
 */
runChild(async (init) => {
  const { transport, first } = init as FanOutFloorInit;
  const sockets = new Set<Socket>();
  // Upgraded sockets are no longer the HTTP server's to close (closeAllConnections), but still hold its close up.
  const upgraded = new Set<Socket>();
  const server = createServer((req, res) => {
    req.resume();
    req.once('end', () => openStream(transport, res, first, sockets));
  });
  server.on('upgrade', (req, socket: Socket) => {
    const key = req.headers['sec-websocket-key'];
    if (transport !== 'ws' || typeof key !== 'string') return void socket.destroy();
    const accept = createHash('sha1').update(`${key}${WS_GUID}`).digest('base64');
    socket.setNoDelay(true);
    upgraded.add(socket);
    socket.once('close', () => upgraded.delete(socket));
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n` +
        'Sec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n',
    );
    answerGraphqlWs(socket, first, sockets);
  });
  const { url, close } = await listenOnLoopback(server);
  return {
    info: { url },
    async call(method, args) {
      if (method === 'count') return sockets.size;
      if (method !== 'broadcast') throw new Error(`unknown operation ${method}`);
      const bytes = messageBytes(transport, (args as BroadcastArgs).result);
      const atMs = monotonicMs();
      for (const socket of sockets) socket.write(bytes);
      return { atMs, sockets: sockets.size } satisfies Broadcast;
    },
    async close() {
      for (const socket of upgraded) socket.destroy();
      await close();
    },
  };
});

/** SSE or multipart: the 200 with bankgraph's headers and the first result, then the socket is the floor's to write. */
function openStream(transport: Transport, res: ServerResponse, first: object, sockets: Set<Socket>): void {
  const socket = res.socket!;
  socket.setNoDelay(true);
  if (transport === 'sse') {
    res.writeHead(200, {
      connection: 'keep-alive',
      'cache-control': 'no-cache',
      'content-encoding': 'none',
      'content-type': 'text/event-stream; charset=utf-8',
    });
    res.write(sseNextEvent(first));
  } else if (transport === 'multipart') {
    res.writeHead(200, {
      'content-type': `multipart/mixed;boundary="${MULTIPART_BOUNDARY}";subscriptionSpec="1.0"`,
      'cache-control': 'no-cache, no-store',
      connection: 'keep-alive',
    });
    res.write(`\r\n--${MULTIPART_BOUNDARY}${multipartPart(first)}`);
  } else {
    res.writeHead(426).end();
    return;
  }
  sockets.add(socket);
  res.once('close', () => sockets.delete(socket));
}

/**
 * graphql-transport-ws as far as the bench's client needs it: the frames it sends are only delimited (their
 * contents are known: connection_init, subscribe, then complete and a close), the first answered with
 * connection_ack, the second with the first result; a close frame is answered with one and the socket ended.
 */
function answerGraphqlWs(socket: Socket, first: object, sockets: Set<Socket>): void {
  let pending: Buffer = Buffer.alloc(0);
  let texts = 0;
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 2) {
      const short = pending[1]! & 0x7f;
      const header = (short === 126 ? 4 : short === 127 ? 10 : 2) + 4;
      if (pending.length < header) break;
      const length = short === 126 ? pending.readUInt16BE(2) : short === 127 ? Number(pending.readBigUInt64BE(2)) : short;
      if (pending.length < header + length) break;
      const opcode = pending[0]! & 0x0f;
      pending = pending.subarray(header + length);
      if (opcode === 0x8) {
        sockets.delete(socket);
        socket.end(WS_CLOSE);
        return;
      }
      if (opcode !== 0x1) continue;
      texts++;
      if (texts === 1) socket.write(wsText({ type: 'connection_ack' }));
      else if (texts === 2) {
        socket.write(wsNextFrame(first));
        sockets.add(socket);
      }
    }
  });
  socket.on('error', () => socket.destroy());
  socket.once('close', () => sockets.delete(socket));
}

function wsText(message: object): Buffer {
  const payload = Buffer.from(JSON.stringify(message));
  return Buffer.concat([Buffer.from([0x81, payload.length]), payload]);
}
