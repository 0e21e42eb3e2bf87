import type { SubscriptionHandler, SubscriptionTarget } from './graphql-ws-socket';
import { HttpStreamSubscription, type ResponseHead } from './http-stream-socket';
import { MultipartReader, MultipartViolation, multipartBoundary } from './multipart-reader';

/** What Apollo's clients ask for: the multipart subscription, or else JSON. */
export const MULTIPART_ACCEPT = 'multipart/mixed;subscriptionSpec="1.0",application/json;q=0.9';

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
  /** Made once the response's Content-Type has named the boundary. */
  private reader: MultipartReader | undefined;

  constructor(target: SubscriptionTarget, handler: SubscriptionHandler) {
    super(target, handler, MULTIPART_ACCEPT);
  }

  protected accepts({ headers }: ResponseHead): string | undefined {
    const type = headers.get('content-type') ?? '';
    if (!/^multipart\/mixed\s*(;|$)/i.test(type)) return `a 200 of content type "${type}", not multipart/mixed`;
    const boundary = multipartBoundary(type);
    if (boundary === undefined) return `a multipart/mixed without a boundary: "${type}"`;
    this.reader = new MultipartReader(boundary, (part) => this.part(part));
    return undefined;
  }

  protected body(bytes: Buffer): void {
    const reader = this.reader!;
    try {
      reader.push(bytes);
    } catch (error) {
      if (!(error instanceof MultipartViolation)) throw error;
      return this.violation(error.message);
    }
    if (reader.closed) this.fail('the server closed the multipart body');
  }

  /** One part: a heartbeat, a payload, or a transport error. */
  private part(message: Record<string, any>): void {
    if (!this.streaming) return;
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
