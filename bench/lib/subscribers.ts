import { performance } from 'node:perf_hooks';
import { GraphqlWsSubscription, type BenchSubscription, type SubscriptionHandler, type SubscriptionTarget } from './graphql-ws-socket';
import { MultipartSubscription } from './multipart-socket';
import { SseSubscription } from './sse-socket';

/** How subscribers reach the gateway: graphql-ws over WebSocket, GraphQL over SSE, or Apollo's multipart HTTP. */
export type Transport = 'ws' | 'sse' | 'multipart';

export const TRANSPORTS: readonly Transport[] = ['ws', 'sse', 'multipart'];

const CLIENTS: Record<Transport, new (target: SubscriptionTarget, handler: SubscriptionHandler) => BenchSubscription> = {
  ws: GraphqlWsSubscription,
  sse: SseSubscription,
  multipart: MultipartSubscription,
};

/** One subscriber of the transport's bench client, on a socket of its own. */
export function subscribe(transport: Transport, target: SubscriptionTarget, handler: SubscriptionHandler): BenchSubscription {
  return new CLIENTS[transport](target, handler);
}

export interface RefundUpdate {
  id: string;
  status: string;
}

/** An expectation's refund id and status that any refund's update in any status meets. */
export const ANY = '*';

interface Expectation {
  refundId: string;
  status: string;
  receivedAtMs: Float64Array;
  seen: Uint8Array;
  count: number;
  done(): void;
}

/**
 * Many subscribers, one socket each, as that many apps would be, all on the same refundUpdated subscription over one
 * transport. Each is one of the bench's own minimal clients (graphql-ws-socket.ts, sse-socket.ts,
 * multipart-socket.ts), which cost the shared CPUs far less per message than the client libraries. Receipt times are
 * taken in this process when each message is handled.
 */
export class SubscriberFleet {
  private readonly subscriptions: BenchSubscription[] = [];
  private readonly target: SubscriptionTarget;
  private expectation: Expectation | undefined;
  /** Set by close(): ends and errors after that are the bench's own doing. */
  private closing = false;
  /** Errors and early completions, which make the run invalid. */
  readonly failures: string[] = [];

  constructor(
    private readonly transport: Transport,
    /** The endpoint: ws://…/graphql, http://…/graphql/stream (SSE) or http://…/graphql (multipart). */
    url: string,
    authorization: string,
    query: string,
    variables: Record<string, unknown>,
    /** Receipt times are read off this clock (ms); see monotonicMs for one shared by every process. */
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.target = { url: new URL(url), authorization, query, variables };
  }

  get size(): number {
    return this.subscriptions.length;
  }

  /** Bytes every subscriber read off its socket so far, framing included. */
  get bytesRead(): number {
    let bytes = 0;
    for (const subscription of this.subscriptions) bytes += subscription.bytesRead;
    return bytes;
  }

  /** Opens `count` subscribers, `concurrency` at a time; done when each has received its first message (the current state). */
  async open(count: number, concurrency: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < count) {
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw new Error(`only ${this.subscriptions.length} of ${count} subscribers were ready within ${timeoutMs} ms`);
        await this.openOne(next++, remaining);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  }

  /** Resolves with every subscriber's receipt time of this refund in this status, once all have it. */
  expect(refundId: string, status: string, timeoutMs: number): Promise<Float64Array> {
    const size = this.subscriptions.length;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const got = this.expectation?.count ?? 0;
        this.expectation = undefined;
        reject(new Error(`${got} of ${size} subscribers received refund ${refundId} ${status} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.expectation = {
        refundId,
        status,
        receivedAtMs: new Float64Array(size),
        seen: new Uint8Array(size),
        count: 0,
        done: () => {
          clearTimeout(timer);
          const { receivedAtMs } = this.expectation!;
          this.expectation = undefined;
          resolve(receivedAtMs);
        },
      };
    });
  }

  /** Completes every subscription and closes every socket; an error naming their states if some do not close in time. */
  async close(timeoutMs = 20_000): Promise<void> {
    this.closing = true;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const phases = new Map<string, number>();
        for (const { phase } of this.subscriptions) phases.set(phase, (phases.get(phase) ?? 0) + 1);
        reject(new Error(`subscribers not closed within ${timeoutMs} ms: ${JSON.stringify(Object.fromEntries(phases))}`));
      }, timeoutMs);
    });
    try {
      await Promise.race([Promise.all(this.subscriptions.map((subscription) => subscription.close())), late]);
    } finally {
      clearTimeout(timer);
    }
    this.subscriptions.length = 0;
  }

  private openOne(index: number, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      let first = true;
      const timer = setTimeout(() => reject(new Error(`subscriber ${index}: no first message within ${timeoutMs} ms`)), timeoutMs);
      const fail = (what: string): void => {
        if (this.closing) return;
        this.failures.push(`subscriber ${index}: ${what}`);
        if (first) {
          first = false;
          clearTimeout(timer);
          reject(new Error(`subscriber ${index}: ${what}`));
        }
      };
      const subscription = subscribe(this.transport, this.target, {
        next: (result) => {
          if (result.errors?.length) return fail(`errors ${JSON.stringify(result.errors).slice(0, 300)}`);
          if (first) {
            first = false;
            clearTimeout(timer);
            resolve();
          }
          const update: RefundUpdate | undefined = result.data?.refundUpdated;
          const expected = this.expectation;
          if (!update || !expected || expected.seen[index]) return;
          if (expected.refundId !== ANY && (update.id !== expected.refundId || update.status !== expected.status)) return;
          expected.seen[index] = 1;
          expected.receivedAtMs[index] = this.clock();
          if (++expected.count === expected.receivedAtMs.length) expected.done();
        },
        fail,
      });
      this.subscriptions.push(subscription);
    });
  }
}

/**
 * Milliseconds on the machine's monotonic clock (CLOCK_MONOTONIC, which process.hrtime reads): the same clock in
 * every process, unlike performance.now(), whose origin is each process's start. Lets subscriber clients in other
 * processes time their messages against the webhook's arrival in the bench process.
 */
export function monotonicMs(): number {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1_000 + nanoseconds / 1e6;
}
