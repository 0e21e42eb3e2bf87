import { performance } from 'node:perf_hooks';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

export interface RefundUpdate {
  id: string;
  status: string;
}

interface Expectation {
  refundId: string;
  status: string;
  receivedAtMs: Float64Array;
  seen: Uint8Array;
  count: number;
  done(): void;
}

/**
 * Many graphql-ws subscribers, one WebSocket (one graphql-ws client) each, as that many apps would be, all on
 * the same refundUpdated subscription. Receipt times are taken in this process when each message is handled.
 */
export class SubscriberFleet {
  private readonly clients: Client[] = [];
  private readonly unsubscribers: (() => void)[] = [];
  private expectation: Expectation | undefined;
  /** Set by close(): ends and errors after that are the bench's own doing. */
  private closing = false;
  /** Errors and early completions, which make the run invalid. */
  readonly failures: string[] = [];

  constructor(
    private readonly wsUrl: string,
    private readonly authorization: string,
    private readonly query: string,
    private readonly variables: Record<string, unknown>,
    /** Receipt times are read off this clock (ms); see monotonicMs for one shared by every process. */
    private readonly clock: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.clients.length;
  }

  /** Opens `count` subscribers, `concurrency` at a time; done when each has received its first message (the current state). */
  async open(count: number, concurrency: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < count) {
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw new Error(`only ${this.clients.length} of ${count} subscribers were ready within ${timeoutMs} ms`);
        await this.openOne(next++, remaining);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  }

  /** Resolves with every subscriber's receipt time of this refund in this status, once all have it. */
  expect(refundId: string, status: string, timeoutMs: number): Promise<Float64Array> {
    const size = this.clients.length;
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

  /** Unsubscribes and closes every socket. */
  async close(): Promise<void> {
    this.closing = true;
    for (const unsubscribe of this.unsubscribers) unsubscribe();
    await Promise.all(this.clients.map((client) => client.dispose()));
    this.clients.length = 0;
    this.unsubscribers.length = 0;
  }

  private openOne(index: number, timeoutMs: number): Promise<void> {
    const client = createClient({
      url: this.wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: this.authorization },
      // A dropped socket is a failure to report, not something to paper over with a reconnect.
      retryAttempts: 0,
      lazy: true,
    });
    this.clients.push(client);
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
      const unsubscribe = client.subscribe<{ refundUpdated: RefundUpdate }>(
        { query: this.query, variables: this.variables },
        {
          next: (result) => {
            if (result.errors?.length) return fail(`errors ${JSON.stringify(result.errors).slice(0, 300)}`);
            if (first) {
              first = false;
              clearTimeout(timer);
              resolve();
            }
            const update = result.data?.refundUpdated;
            const expected = this.expectation;
            if (!update || !expected || update.id !== expected.refundId || update.status !== expected.status || expected.seen[index]) return;
            expected.seen[index] = 1;
            expected.receivedAtMs[index] = this.clock();
            if (++expected.count === expected.receivedAtMs.length) expected.done();
          },
          error: (error) => fail(`error ${describe(error)}`),
          complete: () => fail('the server completed the subscription'),
        },
      );
      this.unsubscribers.push(unsubscribe);
    });
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null && 'code' in error)
    return `close ${(error as { code: number; reason?: string }).code} ${(error as { reason?: string }).reason ?? ''}`;
  return JSON.stringify(error)?.slice(0, 300) ?? String(error);
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
