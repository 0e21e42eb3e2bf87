import type { Socket } from 'node:net';
import type { BenchSubscription, SubscriptionHandler, SubscriptionTarget } from './graphql-ws-socket';
import { connectSubscriber } from './subscriber-socket';

/**
 * One subscription streamed in an HTTP/1.1 response, on node:net: the part the bench's SSE and multipart subscriber
 * clients share. Like graphql-ws-socket.ts, it does only what the protocol asks of a client, because the clients
 * share the gateway's cores while it is timed: one POST with the operation, the response head read and checked, the
 * body de-chunked (or read to its end) and handed to the subclass's parser as it arrives, in whatever pieces the
 * reads cut it. A status other than 200, a wrong content type, a broken chunk, the end of the body or of the socket
 * is reported through `fail`, with what the server said.
 */

/** The response's head, as the subclass checks it: the status and the headers, names in lower case. */
export interface ResponseHead {
  status: number;
  headers: Map<string, string>;
}

const MAX_HEAD_BYTES = 8 * 1024;
/** A chunk-size line or trailer longer than this is a broken stream, not one to buffer. */
const MAX_LINE_BYTES = 1024;
/** How much of a refusal's body is kept for the failure message. */
const MAX_ERROR_BODY_BYTES = 2 * 1024;

enum State {
  Requesting,
  Streaming,
  /** A refusal (or an answer the subclass does not accept): its body is kept for the failure message. */
  Refused,
  /** close() ended our side; the server's end of the socket is awaited. */
  Closing,
  Done,
}

const enum Framing {
  Chunked,
  Length,
  /** No length: the body is everything until the server closes the connection. */
  UntilClose,
}

const enum Chunk {
  Size,
  Data,
  /** The CRLF after a chunk's data: `crlfLeft` bytes of it still to come. */
  Crlf,
  Trailer,
}

export abstract class HttpStreamSubscription implements BenchSubscription {
  bytesRead = 0;
  private state = State.Requesting;
  private readonly socket: Socket;
  /** Bytes of an incomplete head, chunk-size line or trailer from earlier reads. */
  private pending: Buffer | undefined;
  private framing = Framing.UntilClose;
  private chunk = Chunk.Size;
  /** Bytes of the body (Length) or of the current chunk's data (Chunked) still to come. */
  private left = 0;
  private crlfLeft = 0;
  private refusal: { reason: string; body: Buffer[]; size: number } | undefined;
  private readonly ended: Promise<void>;

  protected constructor(
    protected readonly target: SubscriptionTarget,
    protected readonly handler: SubscriptionHandler,
    /** The Accept header that asks for this transport. */
    private readonly accept: string,
  ) {
    ({ socket: this.socket, ended: this.ended } = connectSubscriber(target.url, {
      connected: () => this.request(),
      read: (bytes) => {
        this.bytesRead += bytes.length;
        this.read(bytes);
      },
      failed: (what) => this.fail(what),
      closed: () => this.bodyEnded(true),
    }));
  }

  get phase(): string {
    return `${State[this.state]}, socket ${this.socket.closed ? 'closed' : this.socket.readyState}`;
  }

  /** Ends the request as a client going away does (the server sees its connection end); resolves once it is closed. */
  close(): Promise<void> {
    if (this.state === State.Requesting || this.state === State.Streaming) {
      this.state = State.Closing;
      this.socket.end();
    } else if (this.state !== State.Closing) {
      this.state = State.Done;
      this.socket.destroy();
    }
    return this.ended;
  }

  /** Checks the 200's head: a reason to refuse it, or undefined when it is this transport's stream. */
  protected abstract accepts(head: ResponseHead): string | undefined;

  /** Body bytes as they arrive (a view of the shared read buffer: copy what is kept past the call). */
  protected abstract body(bytes: Buffer): void;

  /** A getter: TypeScript would keep its narrowing of `state` across the calls that change it. */
  private get done(): boolean {
    return this.state === State.Done;
  }

  protected get streaming(): boolean {
    return this.state === State.Streaming;
  }

  protected violation(what: string): void {
    this.fail(`the server broke the protocol: ${what}`);
  }

  /** Ends the subscription with a failure (reported unless close() was called first). */
  protected fail(what: string): void {
    const { state } = this;
    if (state === State.Done) return;
    this.state = State.Done;
    this.socket.destroy();
    if (state !== State.Closing) this.handler.fail(what);
  }

  private request(): void {
    const { url, authorization, query, variables } = this.target;
    const body = Buffer.from(JSON.stringify({ query, variables }));
    this.socket.write(
      `POST ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: ${this.accept}\r\nAuthorization: ${authorization}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    this.socket.write(body);
  }

  /** Reading goes on while closing (bytes ignored), so the server's end of the connection is seen. */
  private read(chunk: Buffer): void {
    if (this.state === State.Done || this.state === State.Closing) return;
    let data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    if (this.state === State.Requesting) {
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) {
        if (data.length > MAX_HEAD_BYTES) return this.fail('a response without an end of headers');
        this.pending = Buffer.from(data);
        return;
      }
      if (!this.head(data.toString('latin1', 0, end))) return;
      data = data.subarray(end + 4);
    }
    const used = this.framing === Framing.Chunked ? this.dechunk(data) : this.plain(data);
    if (used < data.length && !this.done) {
      if (data.length - used > MAX_LINE_BYTES) return this.violation('a chunk-size line or trailer too long');
      this.pending = Buffer.from(data.subarray(used));
    }
  }

  /** Parses and checks the response head; false when the subscription failed on it. */
  private head(text: string): boolean {
    const [statusLine = '', ...lines] = text.split('\r\n');
    const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(statusLine);
    if (!status) {
      this.violation(`a status line "${statusLine.slice(0, 100)}"`);
      return false;
    }
    const headers = new Map<string, string>();
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon <= 0) {
        this.violation(`a malformed header line: ${line.slice(0, 100)}`);
        return false;
      }
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const encoding = headers.get('transfer-encoding');
    const length = headers.get('content-length');
    if (encoding !== undefined) {
      if (encoding.toLowerCase() !== 'chunked') {
        this.violation(`Transfer-Encoding: ${encoding}`);
        return false;
      }
      this.framing = Framing.Chunked;
    } else if (length !== undefined) {
      this.framing = Framing.Length;
      this.left = Number(length);
    }
    const code = Number(status[1]);
    const wrong = code !== 200 ? `the server answered ${statusLine}` : this.accepts({ status: code, headers });
    this.state = wrong === undefined ? State.Streaming : State.Refused;
    if (wrong !== undefined) this.refusal = { reason: wrong, body: [], size: 0 };
    if (this.framing === Framing.Length && this.left === 0) this.bodyEnded(false);
    return !this.done;
  }

  /** An unchunked body: all of it (Length counts down to its end). */
  private plain(data: Buffer): number {
    if (this.framing === Framing.Length) {
      if (data.length > this.left) {
        this.violation('bytes past the end of the body');
        return data.length;
      }
      this.left -= data.length;
    }
    this.deliver(data);
    if (this.framing === Framing.Length && this.left === 0) this.bodyEnded(false);
    return data.length;
  }

  /** Handles chunked framing (RFC 9112 7.1) from the start of `data`: the bytes used; the rest waits for more. */
  private dechunk(data: Buffer): number {
    let offset = 0;
    while (offset < data.length && !this.done) {
      if (this.chunk === Chunk.Data) {
        const take = Math.min(this.left, data.length - offset);
        this.deliver(data.subarray(offset, offset + take));
        offset += take;
        this.left -= take;
        if (this.left === 0) [this.chunk, this.crlfLeft] = [Chunk.Crlf, 2];
      } else if (this.chunk === Chunk.Crlf) {
        if (data[offset] !== (this.crlfLeft === 2 ? 0x0d : 0x0a)) {
          this.violation('a chunk not followed by CRLF');
          return data.length;
        }
        offset++;
        if (--this.crlfLeft === 0) this.chunk = Chunk.Size;
      } else {
        const lineEnd = data.indexOf('\r\n', offset);
        if (lineEnd < 0) return offset;
        const line = data.toString('latin1', offset, lineEnd);
        offset = lineEnd + 2;
        if (this.chunk === Chunk.Trailer) {
          if (line === '') this.bodyEnded(false);
          continue;
        }
        const size = /^([0-9a-fA-F]{1,8})(?:[ \t]*;.*)?$/.exec(line);
        if (!size) {
          this.violation(`a chunk-size line "${line.slice(0, 50)}"`);
          return data.length;
        }
        this.left = parseInt(size[1]!, 16);
        this.chunk = this.left === 0 ? Chunk.Trailer : Chunk.Data;
      }
    }
    return data.length;
  }

  private deliver(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (this.state === State.Streaming) return this.body(bytes);
    const refusal = this.refusal!;
    if (refusal.size < MAX_ERROR_BODY_BYTES) {
      refusal.body.push(Buffer.from(bytes.subarray(0, MAX_ERROR_BODY_BYTES - refusal.size)));
      refusal.size += Math.min(bytes.length, MAX_ERROR_BODY_BYTES - refusal.size);
    }
  }

  /** The body ended (its last chunk, its length, or the connection closed): a stream that ends is a failure. */
  private bodyEnded(socketClosed: boolean): void {
    if (this.state === State.Refused) {
      const { reason, body } = this.refusal!;
      const text = Buffer.concat(body).toString('utf8').trim();
      return this.fail(text ? `${reason}: ${text}` : reason);
    }
    if (this.state === State.Closing) {
      this.state = State.Done;
      return;
    }
    if (this.state === State.Requesting) return this.fail('the socket closed before a response');
    this.fail(socketClosed ? 'the socket closed' : 'the server ended the stream');
  }
}
