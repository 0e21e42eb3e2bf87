import { Socket } from 'node:net';
import { WebSocket } from 'ws';

/**
 * One event's shared result, serialised once per event and operation for all its subscribers. Over graphql-ws the
 * message is `{"id":<id>,"type":"next","payload":<result>}`: only the id differs from subscriber to subscriber, so
 * the rest (`<result>}`, the tail) is encoded to UTF-8 once, and each subscriber's frame is its header, its own
 * prefix and these shared bytes. Over SSE and multipart every subscriber of the operation reads the same bytes,
 * made once per transport (`encoded`).
 */
export class SharedNext {
  private bytes: Buffer | undefined;
  private encodings: Map<(json: string) => string, Buffer> | undefined;

  constructor(
    /** The result's JSON, for the paths that send a string (ws.send). */
    readonly json: string,
  ) {}

  get tail(): Buffer {
    return (this.bytes ??= Buffer.from(`${this.json}}`));
  }

  /** The result as `encoding` frames it, encoded to UTF-8 once for every subscriber that uses the same encoding. */
  encoded(encoding: (json: string) => string): Buffer {
    let bytes = this.encodings?.get(encoding);
    if (bytes === undefined) (this.encodings ??= new Map()).set(encoding, (bytes = Buffer.from(encoding(this.json))));
    return bytes;
  }
}

/** The start of a `next` message for operation `id`; SharedNext's tail completes it. */
export function nextPrefix(id: string): string {
  return `{"id":${JSON.stringify(id)},"type":"next","payload":`;
}

/**
 * Above this many bytes the shared tail is written as its own buffer (two writes, corked into one writev) rather
 * than copied into each subscriber's frame: copying a small tail is cheaper than a second write, copying a large
 * one into thousands of frames is not.
 */
const COPY_TAIL_UP_TO_BYTES = 4 * 1024;

/**
 * The parts of ws's WebSocket and Sender this module reads (ws 8.23.0, pinned in package.json); each is checked,
 * and any surprise sends the ordinary way. test/unit/platform/live/ws-internals.test.ts fails when they change.
 */
interface WsInternals {
  _socket?: Socket;
  _sender?: { _state?: unknown; _queue?: unknown[] };
}

/** ws's Sender state when it is not compressing or reading a Blob, i.e. when nothing is queued behind it. */
const SENDER_IDLE = 0;

/**
 * The TCP socket under `socket` when a frame may be written straight to it: open, not compressing, and nothing of
 * ws's own in flight (data still buffered, its sender busy or queueing), so messages on one socket keep their
 * order. Undefined otherwise: send the ordinary way.
 */
function directSocket(socket: WebSocket): Socket | undefined {
  const { _socket: raw, _sender: sender } = socket as unknown as WsInternals;
  if (
    raw === undefined ||
    !raw.writable ||
    sender?._state !== SENDER_IDLE ||
    !Array.isArray(sender._queue) ||
    sender._queue.length > 0 ||
    socket.bufferedAmount > 0 ||
    // A server's frames are never masked, nor compressed unless permessage-deflate was agreed.
    socket.extensions !== ''
  ) {
    return undefined;
  }
  return raw;
}

/** Whether `socket` has the private fields directSocket reads, of the types it expects; without them every frame goes through ws. */
export function wsInternalsAsExpected(socket: WebSocket): boolean {
  const { _socket: raw, _sender: sender } = socket as unknown as WsInternals;
  return raw instanceof Socket && typeof sender === 'object' && sender !== null && typeof sender._state === 'number' && Array.isArray(sender._queue);
}

/** A buffer of `headerBytes + room` bytes that starts with the header of an unmasked, final text frame of `length` bytes. */
function textFrame(length: number, room: number): { frame: Buffer; headerBytes: number } {
  const headerBytes = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(headerBytes + room);
  frame[0] = 0x81; // FIN, text
  if (headerBytes === 2) frame[1] = length;
  else if (headerBytes === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(0, 2);
    frame.writeUInt32BE(length, 6);
  }
  return { frame, headerBytes };
}

/**
 * Sends one `next` message: `prefix` (nextPrefix(id), `prefixBytes` its UTF-8 length) followed by the shared tail,
 * as one unmasked text frame written straight to the socket. Equivalent to `socket.send(prefix + json + '}')`,
 * without encoding the result again, ws's options object and its cork/writev per message; ws's own send whenever
 * directSocket says no. False when the socket is not open.
 */
export function writeNext(socket: WebSocket, prefix: string, prefixBytes: number, shared: SharedNext): boolean {
  if (socket.readyState !== WebSocket.OPEN) return false;
  const raw = directSocket(socket);
  if (raw === undefined) {
    socket.send(`${prefix}${shared.json}}`);
    return true;
  }
  const tail = shared.tail;
  const copyTail = tail.length <= COPY_TAIL_UP_TO_BYTES;
  const { frame, headerBytes } = textFrame(prefixBytes + tail.length, prefixBytes + (copyTail ? tail.length : 0));
  frame.write(prefix, headerBytes, 'utf8');
  if (copyTail) {
    tail.copy(frame, headerBytes + prefixBytes);
    raw.write(frame);
  } else {
    raw.cork();
    raw.write(frame);
    raw.write(tail);
    raw.uncork();
  }
  return true;
}

/**
 * Sends any other message (connection_ack, a subscriber's first `next`, `complete`) as one frame written straight
 * to the socket, as writeNext does: one write where ws's send corks a header and a payload into a writev and
 * calls back once they are flushed. False when directSocket says no (the caller sends through ws) or the socket is
 * not open.
 */
export function writeText(socket: WebSocket, data: string): boolean {
  if (socket.readyState !== WebSocket.OPEN) return false;
  const raw = directSocket(socket);
  if (raw === undefined) return false;
  const length = Buffer.byteLength(data);
  const { frame, headerBytes } = textFrame(length, length);
  frame.write(data, headerBytes, 'utf8');
  raw.write(frame);
  return true;
}
