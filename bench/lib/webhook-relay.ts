import { createServer, type IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { listenOnLoopback, type ListeningServer } from './loopback-server';

export interface WebhookArrival {
  /** When the whole webhook had arrived and was passed on, on the relay's clock (performance.now() of the bench process by default). */
  atMs: number;
  type?: string;
  refundId?: string;
  /** The gateway's answer to it. */
  status?: number;
}

/** Headers that belong to the hop, not to the webhook; fetch sets its own. */
const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'keep-alive', 'transfer-encoding']);

/**
 * The sandbox's payments webhooks go through this loopback relay on their way to the gateway, so their arrival is
 * timed on the same clock as the subscribers' messages (the sandbox runs in another process and keeps no delivery
 * times). The relay passes the bytes and the signed headers on unchanged, to the same path, so the signature over
 * "POST <path>" still verifies; its cost is one extra loopback hop, which counts against bankgraph, not for it.
 */
export class WebhookRelay {
  readonly arrivals: WebhookArrival[] = [];
  private readonly waiters: { match: (arrival: WebhookArrival) => boolean; resolve: (arrival: WebhookArrival) => void }[] = [];

  private constructor(
    private readonly listening: ListeningServer,
    private readonly clock: () => number,
  ) {}

  /** `clock` times the arrivals (performance.now() unless the subscribers' clock is another). */
  static async start(targetOrigin: string, clock: () => number = () => performance.now()): Promise<WebhookRelay> {
    let relay!: WebhookRelay;
    const server = createServer((req, res) => {
      void relay.forward(req, targetOrigin).then(
        ({ status, body }) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(body);
        },
        () => {
          res.writeHead(502);
          res.end();
        },
      );
    });
    relay = new WebhookRelay(await listenOnLoopback(server), clock);
    return relay;
  }

  /** Resolves with the first arrival (past or future) that matches, or rejects after timeoutMs. */
  waitFor(match: (arrival: WebhookArrival) => boolean, timeoutMs: number): Promise<WebhookArrival> {
    const seen = this.arrivals.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching webhook arrived within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({
        match,
        resolve: (arrival) => {
          clearTimeout(timer);
          resolve(arrival);
        },
      });
    });
  }

  get url(): string {
    return this.listening.url;
  }

  close(): Promise<void> {
    return this.listening.close();
  }

  private async forward(req: IncomingMessage, targetOrigin: string): Promise<{ status: number; body: string }> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const arrival: WebhookArrival = { atMs: this.clock() };
    try {
      const parsed = JSON.parse(body.toString('utf8')) as { type?: unknown; refund_id?: unknown };
      if (typeof parsed.type === 'string') arrival.type = parsed.type;
      if (typeof parsed.refund_id === 'string') arrival.refundId = parsed.refund_id;
    } catch {
      // Not JSON: passed on all the same; the gateway decides what it is.
    }
    this.arrivals.push(arrival);
    for (const waiter of this.waiters.filter((candidate) => candidate.match(arrival))) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(arrival);
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && !HOP_HEADERS.has(name)) headers[name] = value;
    const response = await fetch(`${targetOrigin}${req.url ?? '/'}`, { method: req.method ?? 'POST', headers, body, signal: AbortSignal.timeout(30_000) });
    arrival.status = response.status;
    return { status: response.status, body: await response.text() };
  }
}
