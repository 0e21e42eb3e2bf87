import { performance } from 'node:perf_hooks';
import { GraphqlWsSubscription, type SubscriptionHandler, type SubscriptionTarget } from './graphql-ws-socket';
import { HttpStreamSubscription, type HttpStreamTransport } from './http-stream-subscription';

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

/** How a fleet subscribes: graphql-ws over a WebSocket, or one HTTP response each over SSE or multipart. */
export type FleetTransport = 'ws' | HttpStreamTransport;

/**
 * Many subscribers, one WebSocket (or one HTTP stream) each, as that many apps would be, all on the same
 * refundUpdated subscription. Each is the bench's own minimal client (graphql-ws-socket.ts over WebSocket,
 * http-stream-subscription.ts over SSE and multipart), which costs the shared CPUs far less per message than the
 * libraries' clients. Receipt times are taken in this process when each message is handled.
 */
export class SubscriberFleet {
  private readonly subscriptions: (GraphqlWsSubscription | HttpStreamSubscription)[] = [];
  private readonly target: SubscriptionTarget;
  private expectation: Expectation | undefined;
  /** Set by close(): ends and errors after that are the bench's own doing. */
  private closing = false;
  /** Errors and early completions, which make the run invalid. */
  readonly failures: string[] = [];

  constructor(
    wsUrl: string,
    authorization: string,
    query: string,
    variables: Record<string, unknown>,
    /** Receipt times are read off this clock (ms); see monotonicMs for one shared by every process. */
    private readonly clock: () => number = () => performance.now(),
    private readonly transport: FleetTransport = 'ws',
  ) {
    this.target = { url: new URL(wsUrl), authorization, query, variables };
  }

  get size(): number {
    return this.subscriptions.length;
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
      const handler: SubscriptionHandler = {
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
      };
      const subscription =
        this.transport === 'ws'
          ? new GraphqlWsSubscription(this.target, handler)
          : new HttpStreamSubscription({ ...this.target, transport: this.transport }, handler);
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
