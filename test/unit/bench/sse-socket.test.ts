import { SseSubscription } from '../../../bench/lib/sse-socket';
import { chunked, recorder, StreamServer, trickle, until } from './stream-server';

const QUERY = 'subscription { ticks }';
const HEAD = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n';
/** Two results between heartbeats, one with CRLF line ends and its JSON on two data lines. */
const EVENTS = [
  ':\n\n',
  'event: next\ndata: {"data":{"ticks":1}}\n\n',
  ':\n\n',
  'event: next\r\ndata: {"data":\r\ndata: {"ticks":2},"errors":[{"message":"two"}]}\r\n\r\n',
];
const RESULTS = [{ data: { ticks: 1 } }, { data: { ticks: 2 }, errors: [{ message: 'two' }] }];

/** `text` in pieces of `size` characters. */
function cut(text: string, size: number): string[] {
  return Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
}

describe('the bench SSE subscriber client', () => {
  let server: StreamServer;
  beforeEach(async () => {
    server = await StreamServer.start('/graphql/stream');
  });
  afterEach(() => server.close());

  const subscribe = (handler = recorder()): { handler: ReturnType<typeof recorder>; subscription: SseSubscription } => ({
    handler,
    subscription: new SseSubscription({ url: new URL(server.url), authorization: 'Bearer k', query: QUERY, variables: { a: 1 } }, handler),
  });

  it('POSTs the operation for an event stream, hands over each next, skips heartbeats; complete is a failure', async () => {
    const { handler } = subscribe();
    const { req, res, body } = await server.next();
    expect([req.method, req.url, req.headers.accept, req.headers.authorization]).toEqual(['POST', '/graphql/stream', 'text/event-stream', 'Bearer k']);
    expect(req.headers['content-type']).toBe('application/json');
    expect(JSON.parse(body)).toEqual({ query: QUERY, variables: { a: 1 } });
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    for (const piece of EVENTS) res.write(piece);
    res.write('event: complete\ndata:\n\n');
    expect(await handler.failed).toBe('the server completed the subscription');
    expect(handler.results).toEqual(RESULTS);
  });

  it.each([
    [1, 'an event per chunk'],
    [2, 'an event per chunk'],
    [3, 'chunks of 5 bytes'],
    [7, 'chunks of 11 bytes'],
  ])('reads the same stream cut every %i bytes, through the head, chunk sizes and events (%s)', async (size, chunking) => {
    const { handler, subscription } = subscribe();
    const { res } = await server.next();
    const chunkSize = Number(/\d+/.exec(chunking)?.[0] ?? 0);
    await trickle(res, subscription, Buffer.concat([Buffer.from(HEAD), chunked(chunkSize ? cut(EVENTS.join(''), chunkSize) : EVENTS)]), size);
    await until(() => handler.results.length === 2);
    expect(handler.results).toEqual(RESULTS);
    expect(handler.failure).toBeUndefined();
    await subscription.close();
  });

  it('reads a body with no chunking, until the connection closes; its end is a failure', async () => {
    const { handler, subscription } = subscribe();
    const { res } = await server.next();
    await trickle(res, subscription, Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n${EVENTS.join('')}`), 5);
    res.socket!.end();
    expect(await handler.failed).toBe('the socket closed');
    expect(handler.results).toEqual(RESULTS);
  });

  it('fails with the status and body of a refusal', async () => {
    const { handler } = subscribe();
    const { res } = await server.next();
    res.writeHead(401, { 'content-type': 'application/json' }).end('{"errors":[{"message":"no key"}]}');
    expect(await handler.failed).toBe('the server answered HTTP/1.1 401 Unauthorized: {"errors":[{"message":"no key"}]}');
  });

  it('fails on a 200 that is not an event stream', async () => {
    const { handler } = subscribe();
    const { res } = await server.next();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":null}');
    expect(await handler.failed).toBe('a 200 of content type "application/json", not text/event-stream: {"data":null}');
  });

  it.each([
    ['another event', 'event: ping\ndata: {}\n\n', 'an event "ping"'],
    ['a next that is not JSON', 'event: next\ndata: {"data":\n\n', 'a next event whose data is not JSON: {"data":'],
    ['a next that is not an object', 'event: next\ndata: [1]\n\n', 'a next event without a result'],
    ['an unknown field', 'evnt: next\n', 'a field "evnt"'],
    ['a line ended by CR alone', 'event: next\rdata: {}\n\n', 'a line ended by CR alone'],
  ])('fails on %s', async (_, text, what) => {
    const { handler } = subscribe();
    const { res } = await server.next();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(EVENTS[1]!);
    res.write(text);
    expect(await handler.failed).toBe(`the server broke the protocol: ${what}`);
    expect(handler.results).toEqual([RESULTS[0]]);
  });

  it.each([
    ['a chunk longer than its size', '3\r\n:\n\nxx\r\n', 'a chunk not followed by CRLF'],
    ['a chunk size that is not hex', '3x\r\n:\n\n\r\n', 'a chunk-size line "3x"'],
  ])('fails on broken chunking: %s', async (_, body, what) => {
    const { handler, subscription } = subscribe();
    const { res } = await server.next();
    await trickle(res, subscription, Buffer.from(`${HEAD}${body}`), 64);
    expect(await handler.failed).toBe(`the server broke the protocol: ${what}`);
  });

  it('fails when the server ends the stream', async () => {
    const { handler } = subscribe();
    const { res } = await server.next();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(EVENTS[1]);
    expect(await handler.failed).toBe('the server ended the stream');
    expect(handler.results).toEqual([RESULTS[0]]);
  });

  it('closes cleanly: the server sees the request end, nothing is reported', async () => {
    const { handler, subscription } = subscribe();
    const { req, res } = await server.next();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(EVENTS[1]);
    await until(() => handler.results.length === 1);
    const closed = new Promise((resolve) => req.socket.once('close', resolve));
    await subscription.close();
    await closed;
    expect(handler.failure).toBeUndefined();
  });
});
