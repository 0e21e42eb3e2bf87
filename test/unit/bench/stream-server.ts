import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BenchSubscription, SubscriptionHandler } from '../../../bench/lib/graphql-ws-socket';

/** One request the server received, with its body, and the response to write (through node:http or raw). */
export interface Received {
  req: IncomingMessage;
  res: ServerResponse;
  body: string;
}

/** A node:http server on port 0 handing each request (body read) to the test. */
export class StreamServer {
  readonly requests: Received[] = [];
  private waiting: ((received: Received) => void) | undefined;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(path: string): Promise<StreamServer> {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const instance = new StreamServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const received = { req, res, body: Buffer.concat(chunks).toString('utf8') };
        instance.requests.push(received);
        instance.waiting?.(received);
      });
    });
    return instance;
  }

  /** The next request (or the one already received). */
  next(): Promise<Received> {
    const index = this.requests.length;
    return new Promise((resolve) => {
      if (this.requests.length > index) return resolve(this.requests[index]!);
      this.waiting = resolve;
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** What a subscription reported: its results and its failure. */
export function recorder(): SubscriptionHandler & { results: unknown[]; failed: Promise<string>; failure: string | undefined } {
  let failed!: (what: string) => void;
  const handler = {
    results: [] as unknown[],
    failure: undefined as string | undefined,
    failed: new Promise<string>((resolve) => (failed = resolve)),
    next: (payload: unknown) => void handler.results.push(payload),
    fail: (what: string) => {
      handler.failure = what;
      failed(what);
    },
  };
  return handler;
}

export async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * Writes `bytes` straight to the response's socket, `size` bytes at a time, each piece written once the client has
 * read the previous one: every piece is a read of its own, so the client's parsers see the stream cut there.
 */
export async function trickle(res: ServerResponse, subscription: BenchSubscription, bytes: Buffer, size: number): Promise<void> {
  const socket = res.socket!;
  const start = subscription.bytesRead;
  for (let offset = 0; offset < bytes.length; offset += size) {
    const end = Math.min(offset + size, bytes.length);
    socket.write(bytes.subarray(offset, end));
    await until(() => subscription.bytesRead >= start + end || handlerDone(subscription));
  }
}

function handlerDone(subscription: BenchSubscription): boolean {
  return subscription.phase.startsWith('Done');
}

/** Chunked transfer coding of `pieces`, one chunk each, and the last chunk when `end`. */
export function chunked(pieces: string[], end = false): Buffer {
  const body = pieces.map((piece) => `${Buffer.byteLength(piece).toString(16)}\r\n${piece}\r\n`).join('');
  return Buffer.from(end ? `${body}0\r\n\r\n` : body);
}
