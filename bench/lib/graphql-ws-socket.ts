import { isUtf8 } from 'node:buffer';
import { createHash, randomBytes, randomFillSync } from 'node:crypto';
import type { Socket } from 'node:net';
import { connectSubscriber } from './subscriber-socket';

/**
 * One graphql-transport-ws subscription over a WebSocket of its own, on node:net: the bench's subscriber client.
 *
 * The clients are the measuring instrument, and they share the gateway's 2 cores: graphql-ws's client on `ws`
 * cost about as much CPU per event as the gateway's whole fan-out (promises, an event emitter and a message object
 * per frame, per subscriber), and that time was taken from the gateway while it was being timed. This client does
 * only what the protocol asks of a subscriber: the HTTP/1.1 upgrade (checked), masked frames out (RFC 6455 requires
 * them of a client), unmasked frames in (any length, split across or joined within reads, fragmented, ping → pong,
 * close), and graphql-transport-ws's connection_init → connection_ack → subscribe → next / error / complete. Anything
 * else the server sends is reported through `fail`, never ignored.
 */

export interface SubscriptionHandler {
  /** A `next` message's payload, parsed (the caller checks it). */
  next(payload: { data?: any; errors?: unknown[] }): void;
  /** The subscription ended or the server broke the protocol; called at most once, never after close(). */
  fail(what: string): void;
}

/** What the fleet needs of a subscriber, whatever its transport. */
export interface BenchSubscription {
  /** Bytes read off its socket so far, framing included: what the server wrote to it. */
  readonly bytesRead: number;
  /** Where it is, for a report of sockets that did not close. */
  readonly phase: string;
  /** Ends the subscription as a client going away does; resolves once the socket is closed. */
  close(): Promise<void>;
}

export interface SubscriptionTarget {
  url: URL;
  /** connection_init's payload is `{ authorization }`, as the gateway's merchant clients send it. */
  authorization: string;
  query: string;
  variables: Record<string, unknown>;
}

const PROTOCOL = 'graphql-transport-ws';
const ACCEPT_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const OPERATION_ID = '1';
/** No message of the bench comes near this; a length beyond it is a broken frame, not one to buffer. */
const MAX_MESSAGE_BYTES = 1 << 20;
const MAX_HANDSHAKE_BYTES = 8 * 1024;

const enum Opcode {
  Continuation = 0x0,
  Text = 0x1,
  Binary = 0x2,
  Close = 0x8,
  Ping = 0x9,
  Pong = 0xa,
}

enum State {
  Upgrading,
  AwaitingAck,
  Subscribed,
  /** We sent a close frame (close()), and wait for the server's and the end of the socket. */
  Closing,
  Done,
}

/**
 * Masking keys, taken 4 bytes at a time from random bytes made 8 KB at a time (as ws does): a randomFillSync call
 * per frame cost a client more CPU than anything else it does while subscribers open.
 */
const MASKS = Buffer.allocUnsafe(8 * 1024);
let maskOffset = MASKS.length;

export class GraphqlWsSubscription implements BenchSubscription {
  private state = State.Upgrading;
  bytesRead = 0;
  private readonly socket: Socket;
  private readonly key = randomBytes(16).toString('base64');
  /** Bytes of an incomplete frame (or upgrade answer) from earlier reads. */
  private pending: Buffer | undefined;
  /** A fragmented text message's frames so far. */
  private fragments: Buffer[] | undefined;
  private readonly ended: Promise<void>;

  constructor(
    private readonly target: SubscriptionTarget,
    private readonly handler: SubscriptionHandler,
  ) {
    ({ socket: this.socket, ended: this.ended } = connectSubscriber(target.url, {
      connected: () => this.upgrade(),
      read: (bytes) => {
        this.bytesRead += bytes.length;
        this.read(bytes);
      },
      failed: (what) => this.fail(what),
      closed: () => this.fail('the socket closed'),
    }));
  }

  /** Where it is, for a report of sockets that did not close: its state and the socket's. */
  get phase(): string {
    return `${State[this.state]}, socket ${this.socket.closed ? 'closed' : this.socket.readyState}`;
  }

  /** Completes the subscription and closes the WebSocket (1000); resolves once the socket is closed. */
  close(): Promise<void> {
    if (this.state === State.Subscribed || this.state === State.AwaitingAck) {
      if (this.state === State.Subscribed) this.sendJson({ id: OPERATION_ID, type: 'complete' });
      this.state = State.Closing;
      const code = Buffer.alloc(2);
      code.writeUInt16BE(1000);
      this.send(Opcode.Close, code);
    } else if (this.state !== State.Closing) {
      this.state = State.Done;
      this.socket.destroy();
    }
    return this.ended;
  }

  private upgrade(): void {
    const { url } = this.target;
    this.socket.write(
      `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${this.key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ${PROTOCOL}\r\n\r\n`,
    );
  }

  /**
   * Reading goes on after the subscription is over (its bytes ignored): a paused socket would never see the
   * server's end of the connection, and so never close.
   */
  private read(chunk: Buffer): void {
    if (this.done) return;
    let data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    if (this.state === State.Upgrading) {
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) {
        if (data.length > MAX_HANDSHAKE_BYTES) {
          return this.fail('an upgrade answer without an end of headers');
        }
        this.pending = Buffer.from(data);
        return;
      }
      if (!this.upgraded(data.toString('latin1', 0, end))) return;
      data = data.subarray(end + 4);
    }
    let offset = 0;
    while (offset < data.length && !this.done) {
      const used = this.frame(data, offset);
      if (used === 0) break;
      offset += used;
    }
    // A copy: `data` is usually the shared read buffer, which the next read overwrites.
    if (offset < data.length && !this.done) this.pending = Buffer.from(data.subarray(offset));
  }

  /** A getter, not `state === State.Done` inline: TypeScript would keep its narrowing of `state` across the calls that change it. */
  private get done(): boolean {
    return this.state === State.Done;
  }

  /** Checks the server's answer to the upgrade (RFC 6455 4.2.2 and the subprotocol), then sends connection_init. */
  private upgraded(head: string): boolean {
    const [status = '', ...lines] = head.split('\r\n');
    const headers = new Map<string, string>();
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon <= 0) {
        this.fail(`a malformed header line in the upgrade answer: ${line}`);
        return false;
      }
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const accept = createHash('sha1').update(`${this.key}${ACCEPT_GUID}`).digest('base64');
    const wrong = !/^HTTP\/1\.1 101 /.test(status)
      ? `the upgrade was answered "${status}"`
      : headers.get('upgrade')?.toLowerCase() !== 'websocket'
        ? 'no Upgrade: websocket in the 101'
        : !/(^|,)\s*upgrade\s*(,|$)/i.test(headers.get('connection') ?? '')
          ? 'no Connection: Upgrade in the 101'
          : headers.get('sec-websocket-accept') !== accept
            ? `Sec-WebSocket-Accept ${headers.get('sec-websocket-accept')}, expected ${accept}`
            : headers.get('sec-websocket-protocol') !== PROTOCOL
              ? `subprotocol ${headers.get('sec-websocket-protocol')}, expected ${PROTOCOL}`
              : headers.has('sec-websocket-extensions')
                ? 'an extension the client did not offer'
                : undefined;
    if (wrong !== undefined) {
      this.fail(wrong);
      return false;
    }
    this.state = State.AwaitingAck;
    this.sendJson({ type: 'connection_init', payload: { authorization: this.target.authorization } });
    return true;
  }

  /** Handles the frame at `offset`: the bytes it took, or 0 when it is not all there yet. */
  private frame(data: Buffer, offset: number): number {
    const available = data.length - offset;
    if (available < 2) return 0;
    const first = data[offset]!;
    const second = data[offset + 1]!;
    let length = second & 0x7f;
    let header = 2;
    if (length === 126) {
      if (available < 4) return 0;
      length = data.readUInt16BE(offset + 2);
      header = 4;
      if (length < 126) return this.violation('a 16-bit length below 126');
    } else if (length === 127) {
      if (available < 10) return 0;
      const high = data.readUInt32BE(offset + 2);
      length = high * 2 ** 32 + data.readUInt32BE(offset + 6);
      header = 10;
      if (length < 65_536) return this.violation('a 64-bit length below 65,536');
    }
    if (second & 0x80) return this.violation('a masked frame from the server');
    if (first & 0x70) return this.violation('reserved bits set (no extension was agreed)');
    if (length > MAX_MESSAGE_BYTES) return this.violation(`a frame of ${length} bytes`);
    if (available < header + length) return 0;
    const payload = data.subarray(offset + header, offset + header + length);
    const fin = (first & 0x80) !== 0;
    const opcode = first & 0x0f;
    if (opcode >= Opcode.Close && (!fin || length > 125)) return this.violation('a fragmented or long control frame');
    switch (opcode) {
      case Opcode.Text:
        if (this.fragments) return this.violation('a text frame inside a fragmented message');
        if (fin) this.message(payload);
        else this.fragments = [Buffer.from(payload)];
        break;
      case Opcode.Continuation:
        if (!this.fragments) return this.violation('a continuation frame with no message to continue');
        this.fragments.push(Buffer.from(payload));
        if (fin) {
          const whole = Buffer.concat(this.fragments);
          this.fragments = undefined;
          this.message(whole);
        }
        break;
      case Opcode.Ping:
        this.send(Opcode.Pong, payload);
        break;
      case Opcode.Pong:
        break;
      case Opcode.Close:
        this.serverClosed(payload);
        break;
      case Opcode.Binary:
        return this.violation('a binary frame (graphql-transport-ws messages are text)');
      default:
        return this.violation(`opcode ${opcode}`);
    }
    return header + length;
  }

  private message(payload: Buffer): void {
    if (!isUtf8(payload)) return void this.violation('a text message that is not UTF-8');
    let message: any;
    try {
      message = JSON.parse(payload.toString('utf8'));
    } catch {
      return void this.violation(`a message that is not JSON: ${payload.toString('utf8', 0, 200)}`);
    }
    const type: unknown = message?.type;
    if (type === 'ping') return this.sendJson({ type: 'pong' });
    if (type === 'pong') return;
    if (this.state === State.AwaitingAck) {
      if (type !== 'connection_ack') return void this.violation(`${String(type)} before connection_ack`);
      this.state = State.Subscribed;
      return this.sendJson({ id: OPERATION_ID, type: 'subscribe', payload: { query: this.target.query, variables: this.target.variables } });
    }
    if (this.state !== State.Subscribed) return;
    if ((type === 'next' || type === 'error' || type === 'complete') && message.id !== OPERATION_ID) {
      return void this.violation(`${type} for operation ${JSON.stringify(message.id)}, not ${OPERATION_ID}`);
    }
    if (type === 'next') {
      if (typeof message.payload !== 'object' || message.payload === null) return void this.violation('a next without a result');
      this.handler.next(message.payload);
    } else if (type === 'error') this.fail(`error ${JSON.stringify(message.payload).slice(0, 300)}`);
    else if (type === 'complete') this.fail('the server completed the subscription');
    else this.violation(`a message of type ${JSON.stringify(type)}`);
  }

  /** The server's close frame: answered with one (RFC 6455 5.5.1) unless it answers ours; the server ends the TCP connection. */
  private serverClosed(payload: Buffer): void {
    const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
    if (this.state === State.Closing) {
      this.state = State.Done;
      this.socket.end();
      return;
    }
    this.send(Opcode.Close, payload.subarray(0, 2));
    this.fail(`closed by the server: ${code} ${payload.toString('utf8', 2)}`);
  }

  private violation(what: string): 0 {
    this.fail(`the server broke the protocol: ${what}`);
    return 0;
  }

  private fail(what: string): void {
    const { state } = this;
    if (state === State.Done) return;
    this.state = State.Done;
    // Frames already written (a close frame answering the server's) go out before the socket is destroyed.
    this.socket.end(() => this.socket.destroy());
    if (state !== State.Closing) this.handler.fail(what);
  }

  private sendJson(message: object): void {
    this.send(Opcode.Text, Buffer.from(JSON.stringify(message)));
  }

  /** One final frame, masked with a fresh key as RFC 6455 5.3 requires of a client. */
  private send(opcode: Opcode, payload: Buffer): void {
    const length = payload.length;
    const header = length < 126 ? 2 : length < 65_536 ? 4 : 10;
    const frame = Buffer.allocUnsafe(header + 4 + length);
    frame[0] = 0x80 | opcode;
    if (header === 2) frame[1] = 0x80 | length;
    else if (header === 4) {
      frame[1] = 0x80 | 126;
      frame.writeUInt16BE(length, 2);
    } else {
      frame[1] = 0x80 | 127;
      frame.writeBigUInt64BE(BigInt(length), 2);
    }
    if (maskOffset === MASKS.length) {
      randomFillSync(MASKS);
      maskOffset = 0;
    }
    MASKS.copy(frame, header, maskOffset, (maskOffset += 4));
    const body = header + 4;
    for (let i = 0; i < length; i++) frame[body + i] = payload[i]! ^ frame[header + (i & 3)]!;
    this.socket.write(frame);
  }
}
