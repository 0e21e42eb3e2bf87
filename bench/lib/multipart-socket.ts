import type { SubscriptionHandler, SubscriptionTarget } from './graphql-ws-socket';
import { HttpStreamSubscription, type ResponseHead } from './http-stream-socket';

/** What Apollo's clients ask for: the multipart subscription, or else JSON. */
export const MULTIPART_ACCEPT = 'multipart/mixed;subscriptionSpec="1.0",application/json;q=0.9';

const enum Parse {
  /** Before the first delimiter (RFC 2046 5.1.1: a preamble, which may be empty). */
  Preamble,
  /** Just after a delimiter: `--` closes the body, CRLF opens a part. */
  AfterDelimiter,
  Part,
  /** After the close delimiter: the epilogue, ignored. */
  Closed,
}

/**
 * One Apollo multipart HTTP subscription (`Accept: multipart/mixed;subscriptionSpec="1.0"`) on a socket of its own:
 * the bench's multipart subscriber client. The response is a multipart/mixed body whose boundary the Content-Type
 * names; each part (headers, a blank line, JSON) is handled once the delimiter after it has arrived, as Apollo
 * Client reads them, so a server writes the delimiter right after each part. A part is `{}` (a heartbeat),
 * `{"payload": <execution result>}`, or `{"payload": null, "errors": [...]}` (a transport error, which ends the
 * subscription). A part that is not application/json, not JSON or none of these, the close delimiter and the end of
 * the stream are failures.
 */
export class MultipartSubscription extends HttpStreamSubscription {
  /** `\r\n--<boundary>`, from the response's Content-Type. */
  private delimiter = Buffer.alloc(0);
  private parse = Parse.Preamble;
  /** Body bytes not yet parsed (copied). */
  private partial: Buffer | undefined;

  constructor(target: SubscriptionTarget, handler: SubscriptionHandler) {
    super(target, handler, MULTIPART_ACCEPT);
  }

  protected accepts({ headers }: ResponseHead): string | undefined {
    const type = headers.get('content-type') ?? '';
    if (!/^multipart\/mixed\s*(;|$)/i.test(type)) return `a 200 of content type "${type}", not multipart/mixed`;
    const boundary = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(type);
    if (!boundary) return `a multipart/mixed without a boundary: "${type}"`;
    this.delimiter = Buffer.from(`\r\n--${boundary[1] ?? boundary[2]}`, 'latin1');
    return undefined;
  }

  protected body(bytes: Buffer): void {
    const data = this.partial ? Buffer.concat([this.partial, bytes]) : bytes;
    this.partial = undefined;
    let offset = 0;
    while (offset < data.length && this.streaming) {
      const used = this.step(data, offset);
      if (used === 0) break;
      offset += used;
    }
    if (offset < data.length && this.streaming && this.parse !== Parse.Closed) this.partial = Buffer.from(data.subarray(offset));
  }

  /** Parses what starts at `offset`: the bytes it took, or 0 when more must arrive first. */
  private step(data: Buffer, offset: number): number {
    const { delimiter } = this;
    switch (this.parse) {
      case Parse.Preamble: {
        // The first delimiter may open the body, without the CRLF before it.
        const dashes = delimiter.subarray(2);
        if (data.length - offset >= dashes.length && data.subarray(offset, offset + dashes.length).equals(dashes)) {
          this.parse = Parse.AfterDelimiter;
          return dashes.length;
        }
        const at = data.indexOf(delimiter, offset);
        if (at < 0) return 0;
        this.parse = Parse.AfterDelimiter;
        return at + delimiter.length - offset;
      }
      case Parse.AfterDelimiter: {
        if (data.length - offset < 2) return 0;
        if (data[offset] === 0x2d && data[offset + 1] === 0x2d) {
          this.parse = Parse.Closed;
          this.fail('the server closed the multipart body');
          return 2;
        }
        if (data[offset] !== 0x0d || data[offset + 1] !== 0x0a) {
          this.violation('a delimiter followed by neither CRLF nor --');
          return 0;
        }
        this.parse = Parse.Part;
        return 2;
      }
      case Parse.Part: {
        const at = data.indexOf(delimiter, offset);
        if (at < 0) return 0;
        this.part(data, offset, at);
        this.parse = Parse.AfterDelimiter;
        return at + delimiter.length - offset;
      }
      case Parse.Closed:
        return data.length - offset;
    }
  }

  /** One part, `data[start, end)`: headers, a blank line, a JSON body. */
  private part(data: Buffer, start: number, end: number): void {
    const headersEnd = data[start] === 0x0d && data[start + 1] === 0x0a ? start : data.indexOf('\r\n\r\n', start);
    if (headersEnd < 0 || headersEnd >= end) return this.violation('a part without a blank line after its headers');
    let contentType: string | undefined;
    if (headersEnd > start) {
      for (const line of data.toString('latin1', start, headersEnd).split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon <= 0) return this.violation(`a malformed part header: ${line.slice(0, 100)}`);
        if (line.slice(0, colon).trim().toLowerCase() === 'content-type') contentType = line.slice(colon + 1).trim();
      }
    }
    if (!contentType || !/^application\/json\s*(;|$)/i.test(contentType)) return this.violation(`a part of content type "${contentType ?? 'none'}"`);
    const bodyStart = headersEnd === start ? start + 2 : headersEnd + 4;
    let message: any;
    try {
      message = JSON.parse(data.toString('utf8', bodyStart, end));
    } catch {
      return this.violation(`a part that is not JSON: ${data.toString('utf8', bodyStart, Math.min(end, bodyStart + 200))}`);
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return this.violation('a part that is not a JSON object');
    if (!('payload' in message)) {
      if (Object.keys(message).length === 0) return; // a heartbeat
      if (Array.isArray(message.errors)) return this.fail(`errors ${JSON.stringify(message.errors).slice(0, 300)}`);
      return this.violation(`a part without payload: ${JSON.stringify(message).slice(0, 200)}`);
    }
    if (message.payload === null) return this.fail(`a transport error: ${JSON.stringify(message.errors ?? null).slice(0, 300)}`);
    if (typeof message.payload !== 'object' || Array.isArray(message.payload)) return this.violation('a payload that is not an execution result');
    this.handler.next(message.payload);
  }
}
