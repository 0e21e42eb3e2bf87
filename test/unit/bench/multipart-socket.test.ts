import { MULTIPART_ACCEPT, MultipartSubscription } from '../../../bench/lib/multipart-socket';
import { chunked, recorder, StreamServer, trickle, until } from './stream-server';

const QUERY = 'subscription { ticks }';
const TYPE = 'multipart/mixed; boundary="graphql"; subscriptionSpec="1.0"';
const HEAD = `HTTP/1.1 200 OK\r\nContent-Type: ${TYPE}\r\nTransfer-Encoding: chunked\r\n\r\n`;
const part = (json: string, headers = 'content-type: application/json; charset=utf-8\r\n'): string => `\r\n${headers}\r\n${json}\r\n--graphql`;
/** As Apollo Router writes them: the delimiter first, then each part followed by the next delimiter; heartbeats between. */
const PARTS = [
  '\r\n--graphql',
  part('{}'),
  part('{"payload":{"data":{"ticks":1}}}'),
  part('{}'),
  part('{"payload":{"data":{"ticks":2},"errors":[{"message":"two"}]}}'),
];
const RESULTS = [{ data: { ticks: 1 } }, { data: { ticks: 2 }, errors: [{ message: 'two' }] }];

/** `text` in pieces of `size` characters. */
function cut(text: string, size: number): string[] {
  return Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
}

describe('the bench multipart subscriber client', () => {
  let server: StreamServer;
  beforeEach(async () => {
    server = await StreamServer.start('/graphql');
  });
  afterEach(() => server.close());

  const subscribe = (handler = recorder()): { handler: ReturnType<typeof recorder>; subscription: MultipartSubscription } => ({
    handler,
    subscription: new MultipartSubscription({ url: new URL(server.url), authorization: 'Bearer k', query: QUERY, variables: { a: 1 } }, handler),
  });

  it("POSTs the operation asking for Apollo's multipart subscription, hands over each payload, skips heartbeats", async () => {
    const { handler, subscription } = subscribe();
    const { req, res, body } = await server.next();
    expect([req.method, req.url, req.headers.accept, req.headers.authorization]).toEqual(['POST', '/graphql', MULTIPART_ACCEPT, 'Bearer k']);
    expect(req.headers.accept).toMatch(/^multipart\/mixed;subscriptionSpec="1.0"/);
    expect(JSON.parse(body)).toEqual({ query: QUERY, variables: { a: 1 } });
    res.writeHead(200, { 'content-type': TYPE });
    for (const piece of PARTS) res.write(piece);
    await until(() => handler.results.length === 2);
    expect(handler.results).toEqual(RESULTS);
    expect(handler.failure).toBeUndefined();
    await subscription.close();
  });

  it.each([
    [1, 0],
    [2, 0],
    [3, 5],
    [7, 13],
  ])('reads the same stream cut every %i bytes (chunks of %i bytes; 0: a part per chunk)', async (size, chunkSize) => {
    const { handler, subscription } = subscribe();
    const { res } = await server.next();
    await trickle(res, subscription, Buffer.concat([Buffer.from(HEAD), chunked(chunkSize ? cut(PARTS.join(''), chunkSize) : PARTS)]), size);
    await until(() => handler.results.length === 2);
    expect(handler.results).toEqual(RESULTS);
    expect(handler.failure).toBeUndefined();
    await subscription.close();
  });

  it('takes a body that opens with the delimiter alone, a part with no headers failing for its missing content type', async () => {
    const { handler } = subscribe();
    const { res } = await server.next();
    res.writeHead(200, { 'content-type': 'multipart/mixed;boundary=gql' });
    res.write('--gql\r\ncontent-type: application/json\r\n\r\n{"payload":{"data":{"ticks":1}}}\r\n--gql');
    res.write('\r\n\r\n{}\r\n--gql');
    expect(await handler.failed).toBe('the server broke the protocol: a part of content type "none"');
    expect(handler.results).toEqual([RESULTS[0]]);
  });

  it.each([
    ['a transport error', part('{"payload":null,"errors":[{"message":"revoked"}]}'), 'a transport error: [{"message":"revoked"}]'],
    ['the close delimiter', '--\r\n', 'the server closed the multipart body'],
    ['a part that is not JSON', part('{"payload":'), 'the server broke the protocol: a part that is not JSON: {"payload":'],
    ['a part of another type', part('{}', 'content-type: text/plain\r\n'), 'the server broke the protocol: a part of content type "text/plain"'],
    ['a part with neither payload nor errors', part('{"data":{}}'), 'the server broke the protocol: a part without payload: {"data":{}}'],
    ['a delimiter followed by garbage', 'xx', 'the server broke the protocol: a delimiter followed by neither CRLF nor --'],
  ])('fails on %s', async (_, text, what) => {
    const { handler } = subscribe();
    const { res } = await server.next();
    res.writeHead(200, { 'content-type': TYPE });
    res.write(PARTS[0]! + PARTS[2]!);
    res.write(text);
    expect(await handler.failed).toBe(what);
    expect(handler.results).toEqual([RESULTS[0]]);
  });

  it('fails with the status and body of a refusal', async () => {
    const { handler } = subscribe();
    const { res } = await server.next();
    res.writeHead(400, { 'content-type': 'application/json' }).end('{"errors":[{"message":"bad"}]}');
    expect(await handler.failed).toBe('the server answered HTTP/1.1 400 Bad Request: {"errors":[{"message":"bad"}]}');
  });

  it('fails on a 200 that is not multipart, or multipart without a boundary', async () => {
    const first = subscribe();
    (await server.next()).res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":null}');
    expect(await first.handler.failed).toBe('a 200 of content type "application/json", not multipart/mixed: {"data":null}');
    const second = subscribe();
    (await server.next()).res.writeHead(200, { 'content-type': 'multipart/mixed' }).end();
    expect(await second.handler.failed).toBe('a multipart/mixed without a boundary: "multipart/mixed"');
  });

  it('fails when the server ends the stream or the connection', async () => {
    const ended = subscribe();
    (await server.next()).res.writeHead(200, { 'content-type': TYPE }).end(PARTS[0]! + PARTS[2]!);
    expect(await ended.handler.failed).toBe('the server ended the stream');
    expect(ended.handler.results).toEqual([RESULTS[0]]);
    const cut = subscribe();
    const { res } = await server.next();
    res.writeHead(200, { 'content-type': TYPE }).write(PARTS[0]!);
    await until(() => cut.subscription.phase.startsWith('Streaming'));
    res.socket!.destroy();
    expect(await cut.handler.failed).toBe('the socket closed');
  });

  it('closes cleanly: the server sees the request end, nothing is reported', async () => {
    const { handler, subscription } = subscribe();
    const { req, res } = await server.next();
    res.writeHead(200, { 'content-type': TYPE });
    res.write(PARTS[0]! + PARTS[2]!);
    await until(() => handler.results.length === 1);
    const closed = new Promise((resolve) => req.socket.once('close', resolve));
    await subscription.close();
    await closed;
    expect(handler.failure).toBeUndefined();
  });
});
