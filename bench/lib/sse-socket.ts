import type { SubscriptionHandler, SubscriptionTarget } from './graphql-ws-socket';
import { HttpStreamSubscription, type ResponseHead } from './http-stream-socket';

/**
 * One GraphQL over SSE subscription (the graphql-sse protocol, "distinct connections" mode) on a socket of its own:
 * the bench's SSE subscriber client. It POSTs the operation with `Accept: text/event-stream` and reads the event
 * stream (WHATWG HTML 9.2.6) as it arrives: lines ended by LF or CRLF, comments (the server's heartbeats) skipped,
 * `event` and `data` fields gathered until a blank line dispatches them. graphql-sse sends `next` events whose data
 * is an execution result, and `complete`; a complete, another event, a `next` that is not a JSON object, an unknown
 * field or the end of the stream is a failure.
 */
export class SseSubscription extends HttpStreamSubscription {
  /** An incomplete line from earlier reads (copied). */
  private partial: Buffer | undefined;
  private event = '';
  private data: string | undefined;

  constructor(target: SubscriptionTarget, handler: SubscriptionHandler) {
    super(target, handler, 'text/event-stream');
  }

  protected accepts({ headers }: ResponseHead): string | undefined {
    const type = headers.get('content-type') ?? '';
    return /^text\/event-stream\s*(;|$)/i.test(type) ? undefined : `a 200 of content type "${type}", not text/event-stream`;
  }

  protected body(bytes: Buffer): void {
    const data = this.partial ? Buffer.concat([this.partial, bytes]) : bytes;
    this.partial = undefined;
    let start = 0;
    while (start < data.length && this.streaming) {
      const end = data.indexOf(0x0a, start);
      if (end < 0) break;
      this.line(data, start, end > start && data[end - 1] === 0x0d ? end - 1 : end);
      start = end + 1;
    }
    if (start < data.length && this.streaming) this.partial = Buffer.from(data.subarray(start));
  }

  /** One line, `data[start, end)` without its line end. */
  private line(data: Buffer, start: number, end: number): void {
    if (start === end) return this.dispatch();
    // A comment: graphql-sse's heartbeat is an empty one.
    if (data[start] === 0x3a) return;
    const cr = data.indexOf(0x0d, start);
    if (cr >= 0 && cr < end) return this.violation('a line ended by CR alone');
    const colon = data.indexOf(0x3a, start);
    const nameEnd = colon >= 0 && colon < end ? colon : end;
    const name = data.toString('latin1', start, nameEnd);
    let valueStart = Math.min(nameEnd + 1, end);
    if (valueStart < end && data[valueStart] === 0x20) valueStart++;
    const value = data.toString('utf8', valueStart, end);
    switch (name) {
      case 'event':
        this.event = value;
        break;
      case 'data':
        this.data = this.data === undefined ? value : `${this.data}\n${value}`;
        break;
      // Fields the event stream format defines, which graphql-sse's distinct connections do not need.
      case 'id':
      case 'retry':
        break;
      default:
        this.violation(`a field "${name.slice(0, 50)}"`);
    }
  }

  private dispatch(): void {
    const { event, data } = this;
    this.event = '';
    this.data = undefined;
    // graphql-sse's complete has an empty data line; without one it would still mean the end.
    if (event === 'complete') return this.fail('the server completed the subscription');
    if (data === undefined) {
      if (event !== '') this.violation(`an event "${event}" without data`);
      return;
    }
    if (event !== 'next') return this.violation(`an event "${event || 'message'}"`);
    let result: unknown;
    try {
      result = JSON.parse(data);
    } catch {
      return this.violation(`a next event whose data is not JSON: ${data.slice(0, 200)}`);
    }
    if (typeof result !== 'object' || result === null || Array.isArray(result)) return this.violation('a next event without a result');
    this.handler.next(result);
  }
}
