import type { Transport } from './subscribers';

/**
 * The bytes a server writes to one subscriber's socket to deliver one execution result, per transport, as bankgraph
 * writes them: what the fan-out floor (bench/servers/fan-out-floor.server.ts) writes to every socket. Scenario 9
 * checks the claim: it counts the bytes the subscribers read per message from bankgraph and from the floor.
 */

/** graphql-ws's operation id: the bench's client subscribes with this one. */
const OPERATION_ID = '1';
export const MULTIPART_BOUNDARY = 'graphql';

/** An unmasked, final WebSocket text frame (RFC 6455 5.2) carrying graphql-transport-ws's `next`. */
export function wsNextFrame(result: object): Buffer {
  const payload = Buffer.from(JSON.stringify({ id: OPERATION_ID, type: 'next', payload: result }));
  const length = payload.length;
  const header = length < 126 ? Buffer.from([0x81, length]) : Buffer.alloc(length < 65_536 ? 4 : 10);
  if (length >= 126) {
    header[0] = 0x81;
    if (length < 65_536) {
      header[1] = 126;
      header.writeUInt16BE(length, 2);
    } else {
      header[1] = 127;
      header.writeBigUInt64BE(BigInt(length), 2);
    }
  }
  return Buffer.concat([header, payload]);
}

/** graphql-sse's `next` event (distinct connections: the result itself is the data). */
export function sseNextEvent(result: object): string {
  return `event: next\ndata: ${JSON.stringify(result)}\n\n`;
}

/** One part of Apollo's multipart subscription, followed by the delimiter, so a client can read it at once. */
export function multipartPart(result: object): string {
  return `\r\ncontent-type: application/json; charset=utf-8\r\n\r\n${JSON.stringify({ payload: result })}\r\n--${MULTIPART_BOUNDARY}`;
}

/** `text` as one chunk of HTTP/1.1's chunked transfer coding, as node:http frames each write of a response. */
export function httpChunk(text: string): Buffer {
  const body = Buffer.from(text);
  return Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n')]);
}

/** Everything one subscriber's socket carries for one result. */
export function messageBytes(transport: Transport, result: object): Buffer {
  switch (transport) {
    case 'ws':
      return wsNextFrame(result);
    case 'sse':
      return httpChunk(sseNextEvent(result));
    case 'multipart':
      return httpChunk(multipartPart(result));
  }
}
