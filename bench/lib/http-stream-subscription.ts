import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import type { SubscriptionHandler } from './graphql-ws-socket';

/** Subscriptions over HTTP: GraphQL over SSE (/graphql/stream) or Apollo's multipart responses (/graphql). */
export type HttpStreamTransport = 'sse' | 'multipart';

export interface HttpStreamTarget {
  url: URL;
  transport: HttpStreamTransport;
  authorization: string;
  query: string;
  variables: Record<string, unknown>;
}

const MULTIPART_ACCEPT = 'multipart/mixed;boundary="graphql";subscriptionSpec="1.0",application/json';
const SSE_NEXT = 'event: next\ndata: ';
const PART_BOUNDARY = '\r\n--graphql';
/** No message of the bench comes near this; a buffer beyond it is a broken stream, not one to keep reading. */
const MAX_BUFFER_CHARS = 1 << 20;

/**
 * One subscription over an HTTP response of its own, on node:http: the bench's SSE and multipart subscriber. It
 * reads what a client must: SSE events (comment lines are heartbeats; `next` carries a result; `complete` ends it)
 * or multipart parts (`{}` heartbeats, `{"payload": ...}` results, `payload: null` a terminal error, `--` the end).
 * Anything that ends the stream before close() is reported through `fail`.
 */
export class HttpStreamSubscription {
  phase = 'connecting';
  private readonly req: ClientRequest;
  private readonly closedPromise: Promise<void>;
  private buffer = '';
  private over = false;

  constructor(
    private readonly target: HttpStreamTarget,
    private readonly handler: SubscriptionHandler,
  ) {
    const body = JSON.stringify({ query: target.query, variables: target.variables });
    this.req = request(target.url, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        accept: target.transport === 'sse' ? 'text/event-stream' : MULTIPART_ACCEPT,
        authorization: target.authorization,
      },
    });
    this.closedPromise = new Promise((resolve) => this.req.once('close', () => resolve()));
    this.req.on('response', (res: IncomingMessage) => this.respond(res));
    this.req.on('error', (error) => this.fail(error.message));
    this.req.end(body);
  }

  /** Ends the subscription from this side (the server sees the response close) and resolves once the socket is gone. */
  async close(): Promise<void> {
    this.over = true;
    this.phase = 'closing';
    this.req.destroy();
    await this.closedPromise;
    this.phase = 'done';
  }

  private respond(res: IncomingMessage): void {
    if (res.statusCode !== 200) {
      res.resume();
      return this.fail(`HTTP ${res.statusCode}`);
    }
    this.phase = 'subscribed';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => this.read(chunk));
    res.on('end', () => this.fail('the stream ended'));
  }

  private read(chunk: string): void {
    this.buffer += chunk;
    if (this.buffer.length > MAX_BUFFER_CHARS) return this.fail('a message past 1 MB');
    if (this.target.transport === 'sse') this.readEvents();
    else this.readParts();
  }

  private readEvents(): void {
    for (let end = this.buffer.indexOf('\n\n'); end >= 0 && !this.over; end = this.buffer.indexOf('\n\n')) {
      const event = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      if (event.startsWith(SSE_NEXT)) this.handler.next(JSON.parse(event.slice(SSE_NEXT.length)));
      else if (event.startsWith('event: complete')) this.fail('the subscription completed');
      else if (!event.startsWith(':')) this.fail(`an unexpected event: ${event.slice(0, 100)}`);
    }
  }

  private readParts(): void {
    for (let end = this.buffer.indexOf(PART_BOUNDARY); end >= 0 && !this.over; end = this.buffer.indexOf(PART_BOUNDARY)) {
      const part = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + PART_BOUNDARY.length);
      const bodyAt = part.indexOf('\r\n\r\n');
      if (bodyAt < 0) continue;
      const body = JSON.parse(part.slice(bodyAt + 4)) as { payload?: { data?: unknown; errors?: unknown[] } | null; errors?: unknown[] };
      if (body.payload) this.handler.next(body.payload);
      else if (body.payload === null) this.fail(`a terminal error: ${JSON.stringify(body.errors).slice(0, 200)}`);
    }
    if (this.buffer.startsWith('--')) this.fail('the subscription completed');
  }

  private fail(what: string): void {
    if (this.over) return;
    this.over = true;
    this.phase = 'failed';
    this.handler.fail(what);
  }
}
