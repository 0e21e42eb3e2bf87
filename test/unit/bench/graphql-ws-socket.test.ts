import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { buildSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { GraphqlWsSubscription, type SubscriptionHandler } from '../../../bench/lib/graphql-ws-socket';

const QUERY = 'subscription { ticks }';

/** What a subscription reported: its `next` payloads and its failure. */
function recorder(): SubscriptionHandler & { results: unknown[]; failed: Promise<string> } {
  let failed!: (what: string) => void;
  const results: unknown[] = [];
  return {
    results,
    failed: new Promise((resolve) => (failed = resolve)),
    next: (payload) => void results.push(payload),
    fail: (what) => failed(what),
  };
}

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('the bench subscriber client against graphql-ws and ws', () => {
  let wsServer: WebSocketServer;
  let url: URL;
  const inits: unknown[] = [];
  /** Ends the `quiet` subscriptions, which yield nothing until then. */
  let stop: () => void;

  beforeEach(async () => {
    inits.length = 0;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    wsServer = new WebSocketServer({ port: 0, host: '127.0.0.1', path: '/graphql' });
    await once(wsServer, 'listening');
    url = new URL(`ws://127.0.0.1:${(wsServer.address() as AddressInfo).port}/graphql`);
    useServer(
      {
        schema: buildSchema('type Query { a: Int } type Subscription { ticks: Int, quiet: Int }'),
        roots: {
          subscription: {
            // Three ticks, the second an error (its field throws), then the subscription completes.
            ticks: async function* () {
              yield { ticks: 1 };
              yield {
                get ticks(): number {
                  throw new Error('two');
                },
              };
              yield { ticks: 3 };
            },
            quiet: async function* () {
              await stopped;
              yield { quiet: 0 };
            },
          },
        },
        onConnect: (ctx) => {
          inits.push(ctx.connectionParams);
          return true;
        },
      },
      wsServer,
    );
  });

  afterEach(async () => {
    stop();
    for (const client of wsServer.clients) client.terminate();
    await new Promise((resolve) => wsServer.close(resolve));
  });

  it('sends connection_init with the authorization, subscribes, and hands over each next; a complete is a failure', async () => {
    const handler = recorder();
    new GraphqlWsSubscription({ url, authorization: 'Bearer k', query: 'subscription { ticks }', variables: {} }, handler);
    expect(await handler.failed).toBe('the server completed the subscription');
    expect(inits).toEqual([{ authorization: 'Bearer k' }]);
    expect(handler.results).toMatchObject([{ data: { ticks: 1 } }, { data: { ticks: null }, errors: [{ message: 'two' }] }, { data: { ticks: 3 } }]);
  });

  it('closes cleanly: complete and a close frame, no failure, the server sees 1000', async () => {
    const handler = recorder();
    const subscription = new GraphqlWsSubscription({ url, authorization: 'Bearer k', query: 'subscription { quiet }', variables: {} }, handler);
    await until(() => inits.length === 1);
    const [server] = [...wsServer.clients];
    const closed = once(server!, 'close');
    await subscription.close();
    const [code] = await closed;
    expect(code).toBe(1000);
    const failure = await Promise.race([handler.failed, new Promise((resolve) => setTimeout(() => resolve('none'), 50))]);
    expect(failure).toBe('none');
  });
});

/** A raw server that completes the upgrade (correctly, or as `answer` says) and then sends whatever a test writes. */
describe('the bench subscriber client against a scripted server', () => {
  let server: Server;
  let url: URL;
  let peer: Socket;
  /** The client's frames, unmasked: opcode and payload; `unmasked` counts frames that came without a mask. */
  let received: { opcode: number; payload: Buffer }[];
  let unmasked: number;
  let answer: (key: string) => string;

  const accept = (key: string): string => createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
  const goodAnswer = (key: string): string =>
    `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept(key)}\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n`;

  /** A server frame with the length in the shortest form, unmasked unless `masked` (a zero mask key). */
  function frame(opcode: number, payload: Buffer | string, { fin = true, masked = false } = {}): Buffer {
    const body = Buffer.from(payload);
    const length = body.length;
    const header = length < 126 ? Buffer.from([0, length]) : length < 65_536 ? Buffer.alloc(4) : Buffer.alloc(10);
    if (length >= 126 && length < 65_536) {
      header[1] = 126;
      header.writeUInt16BE(length, 2);
    } else if (length >= 65_536) {
      header[1] = 127;
      header.writeBigUInt64BE(BigInt(length), 2);
    }
    header[0] = (fin ? 0x80 : 0) | opcode;
    if (!masked) return Buffer.concat([header, body]);
    header[1] |= 0x80;
    return Buffer.concat([header, Buffer.from([0, 0, 0, 0]), body]);
  }
  const text = (message: object): Buffer => frame(0x1, JSON.stringify(message));
  const messages = (): unknown[] => received.filter((f) => f.opcode === 0x1).map((f) => JSON.parse(f.payload.toString()));

  beforeEach(async () => {
    received = [];
    unmasked = 0;
    answer = goodAnswer;
    server = createServer((socket) => {
      peer = socket;
      let buffered = Buffer.alloc(0);
      let upgraded = false;
      socket.on('data', (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        if (!upgraded) {
          const end = buffered.indexOf('\r\n\r\n');
          if (end < 0) return;
          const key = /sec-websocket-key: (\S+)/i.exec(buffered.toString('latin1', 0, end))![1]!;
          buffered = buffered.subarray(end + 4);
          upgraded = true;
          socket.write(answer(key));
        }
        // Client frames here are all short (7-bit or 16-bit lengths).
        while (buffered.length >= 2) {
          const masked = (buffered[1]! & 0x80) !== 0;
          let length = buffered[1]! & 0x7f;
          let at = 2;
          if (length === 126) {
            length = buffered.readUInt16BE(2);
            at = 4;
          }
          const keyAt = at;
          if (masked) at += 4;
          if (buffered.length < at + length) return;
          const payload = Buffer.from(buffered.subarray(at, at + length));
          if (masked) for (let i = 0; i < length; i++) payload[i]! ^= buffered[keyAt + (i & 3)]!;
          else unmasked++;
          received.push({ opcode: buffered[0]! & 0x0f, payload });
          buffered = buffered.subarray(at + length);
        }
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = new URL(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`);
  });

  afterEach(async () => {
    peer?.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  /** A client subscribed: connection_init answered with an ack, and its subscribe received. */
  async function subscribed(): Promise<ReturnType<typeof recorder>> {
    const handler = recorder();
    new GraphqlWsSubscription({ url, authorization: 'Bearer k', query: QUERY, variables: { a: 1 } }, handler);
    await until(() => messages().length === 1);
    peer.write(text({ type: 'connection_ack' }));
    await until(() => messages().length === 2);
    return handler;
  }

  it('masks every frame it sends, and sends connection_init, then subscribe after the ack', async () => {
    await subscribed();
    expect(messages()).toEqual([
      { type: 'connection_init', payload: { authorization: 'Bearer k' } },
      { id: '1', type: 'subscribe', payload: { query: QUERY, variables: { a: 1 } } },
    ]);
    expect(unmasked).toBe(0);
  });

  it('reads frames split across reads, joined in one read, fragmented, and of 16- and 64-bit lengths; answers pings', async () => {
    const handler = await subscribed();
    const long = 'x'.repeat(70_000);
    const medium = 'y'.repeat(300);
    const bytes = Buffer.concat([
      text({ id: '1', type: 'next', payload: { data: { n: 1 } } }),
      frame(0x9, 'are you there'),
      text({ id: '1', type: 'next', payload: { data: { n: medium } } }),
      text({ id: '1', type: 'next', payload: { data: { n: long } } }),
      frame(0x1, '{"id":"1","type":"next",', { fin: false }),
      frame(0x0, '"payload":{"data":{"n":', { fin: false }),
      frame(0x0, '4}}}'),
    ]);
    // The first frames one byte at a time, the rest in one write.
    for (let i = 0; i < 40; i++) peer.write(bytes.subarray(i, i + 1));
    peer.write(bytes.subarray(40));
    await until(() => handler.results.length === 4);
    expect(handler.results).toEqual([{ data: { n: 1 } }, { data: { n: medium } }, { data: { n: long } }, { data: { n: 4 } }]);
    await until(() => received.some((f) => f.opcode === 0xa));
    expect(received.find((f) => f.opcode === 0xa)!.payload.toString()).toBe('are you there');
    expect(unmasked).toBe(0);
  });

  it.each([
    ['a masked frame', frame(0x1, '{}', { masked: true }), /masked frame/],
    ['a binary frame', frame(0x2, '{}'), /binary frame/],
    ['reserved bits', Buffer.from([0xc1, 0x02, 0x7b, 0x7d]), /reserved bits/],
    ['a 16-bit length that fits in 7 bits', Buffer.from([0x81, 126, 0, 2, 0x7b, 0x7d]), /16-bit length/],
    ['a message that is not JSON', frame(0x1, 'not json'), /not JSON/],
    ['a message that is not UTF-8', frame(0x1, Buffer.from([0x22, 0xff, 0x22])), /not UTF-8/],
    ['a next for another operation', text({ id: '2', type: 'next', payload: { data: {} } }), /operation "2"/],
    ['an unknown message type', text({ id: '1', type: 'nope' }), /type "nope"/],
    ['an error message', text({ id: '1', type: 'error', payload: [{ message: 'denied' }] }), /^error .*denied/],
    ['a close frame', frame(0x8, Buffer.concat([Buffer.from([0x0f, 0xa0]), Buffer.from('bye')])), /closed by the server: 4000 bye/],
  ])('reports %s as a failure', async (_case, bytes, expected) => {
    const handler = await subscribed();
    peer.write(bytes);
    expect(await handler.failed).toMatch(expected);
    expect(handler.results).toEqual([]);
  });

  it('answers a close frame with one', async () => {
    const handler = await subscribed();
    peer.write(frame(0x8, Buffer.from([0x03, 0xe8])));
    await handler.failed;
    await until(() => received.some((f) => f.opcode === 0x8));
    expect(received.find((f) => f.opcode === 0x8)!.payload.readUInt16BE(0)).toBe(1000);
  });

  it('reports the socket closing without a close frame', async () => {
    const handler = await subscribed();
    peer.destroy();
    expect(await handler.failed).toBe('the socket closed');
  });

  it('reports a next before connection_ack', async () => {
    const handler = recorder();
    new GraphqlWsSubscription({ url, authorization: 'Bearer k', query: QUERY, variables: {} }, handler);
    await until(() => messages().length === 1);
    peer.write(text({ id: '1', type: 'next', payload: { data: {} } }));
    expect(await handler.failed).toMatch(/next before connection_ack/);
  });

  it.each([
    ['a status other than 101', () => 'HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n', /answered "HTTP\/1.1 403 Forbidden"/],
    ['a wrong Sec-WebSocket-Accept', (key: string) => goodAnswer(key).replace(accept(key), accept('other')), /Sec-WebSocket-Accept/],
    ['another subprotocol', (key: string) => goodAnswer(key).replace('graphql-transport-ws', 'graphql-ws'), /subprotocol graphql-ws/],
    ['no subprotocol', (key: string) => goodAnswer(key).replace('Sec-WebSocket-Protocol: graphql-transport-ws\r\n', ''), /subprotocol undefined/],
  ])('reports an upgrade answer with %s', async (_case, wrong, expected) => {
    answer = wrong;
    const handler = recorder();
    new GraphqlWsSubscription({ url, authorization: 'Bearer k', query: QUERY, variables: {} }, handler);
    expect(await handler.failed).toMatch(expected);
    expect(messages()).toEqual([]);
  });
});
