import type { ExpectArgs } from '../servers/subscribers.client';
import type { ChildServer } from './child-server';
import type { BenchContext } from './context';
import { json } from './http';
import { ANY } from './subscribers';
import { percentile } from './load';
import { fmt, verdict, type Row } from './table';
import type { WebhookRelay } from './webhook-relay';

/** The sandbox executes an authorized refund 60 s of sandbox time after authorizing it (README). */
export const EXECUTE_AFTER_SECONDS = 61;

export interface RefundEventsRun {
  label: string;
  events: number;
  subscribers: number;
  /** The refund of the first event, made before anyone subscribed (its subscribers' first message). */
  firstRefundId: string;
  /** Makes the next event's refund through the gateway; executed when the sandbox clock moves. */
  refund(event: number): Promise<string>;
  sandboxUrl: string;
  relay: WebhookRelay;
  /** The gateway processes whose CPU time per event is reported; the first receives the webhooks. */
  gateways: ChildServer[];
  /** Subscriber processes (bench/servers/subscribers.client.ts), all on the same payment's refunds. */
  clients: ChildServer[];
  eventTimeoutMs: number;
  /** How a process's CPU time is read: ChildServer.cpuMs (10 ms ticks) unless given, e.g. threadsCpuMs. */
  cpuMs?: (process: ChildServer) => number;
  /** Also count the bytes the subscribers read over each measured event (an IPC round trip per client before and after). */
  countBytes?: boolean;
}

export interface RefundEventsResult {
  /** Per event: webhook arrival to the last subscriber's message, ms. */
  toLast: number[];
  /** Per message: webhook arrival to that subscriber's message, ms. */
  toEach: number[];
  /** Per gateway, over all events. */
  gatewayCpuMs: number[];
  /** Per event, per gateway. */
  gatewayCpuMsByEvent: number[][];
  clientCpuMs: number;
  /** Each measured event's refund. */
  refundIds: string[];
  /** Per event, the bytes every subscriber read from trigger to last message, summed (countBytes only). */
  bytesRead: number[];
}

/**
 * Scenarios 4 and 8's measured events: each a refund executed by moving the sandbox clock, timed from the whole
 * webhook's arrival at the relay to every subscriber's message carrying it as EXECUTED, on the machine's monotonic
 * clock that the relay and the subscriber processes both read.
 */
export async function measureRefundEvents(ctx: BenchContext, run: RefundEventsRun): Promise<RefundEventsResult> {
  const result: RefundEventsResult = {
    toLast: [],
    toEach: [],
    gatewayCpuMs: run.gateways.map(() => 0),
    gatewayCpuMsByEvent: [],
    clientCpuMs: 0,
    refundIds: [],
    bytesRead: [],
  };
  const cpuMs = run.cpuMs ?? ((process: ChildServer) => process.cpuMs());
  const clientBytes = async (): Promise<number> =>
    run.countBytes ? (await Promise.all(run.clients.map((client) => client.call<number>('bytes', null, 10_000)))).reduce((a, b) => a + b, 0) : 0;
  let refundId = run.firstRefundId;
  for (let event = 1; event <= run.events; event++) {
    if (event > 1) {
      // A refund made through the gateway is pushed to every subscriber at once: that fan-out has reached them all
      // before the event's own is measured, so its CPU is not counted as the execution's.
      await Promise.all(run.clients.map((client) => client.call('arm', { refundId: ANY, status: ANY, timeoutMs: run.eventTimeoutMs }, 10_000)));
      refundId = await run.refund(event);
      await Promise.all(run.clients.map((client) => client.call('collect', null, run.eventTimeoutMs + 10_000)));
    }
    ctx.progress(`${run.label}: event ${event}/${run.events} (refund ${refundId} executed) to ${run.subscribers} subscribers`);
    const expectArgs: ExpectArgs = { refundId, status: 'EXECUTED', timeoutMs: run.eventTimeoutMs };
    await Promise.all(run.clients.map((client) => client.call('arm', expectArgs, 10_000)));
    const expected = refundId;
    const arrived = run.relay.waitFor((arrival) => arrival.type === 'refund_executed' && arrival.refundId === expected, run.eventTimeoutMs);
    const bytesBefore = await clientBytes();
    const cpuBefore = run.gateways.map((gateway) => cpuMs(gateway));
    const clientsBefore = run.clients.map((client) => cpuMs(client));
    // One Promise.all over the trigger and every wait, so whichever fails first is the error and none goes unhandled.
    const [arrival, times] = await Promise.all([
      arrived,
      Promise.all(run.clients.map((client) => client.call<number[]>('collect', null, run.eventTimeoutMs + 10_000))),
      json('POST', `${run.sandboxUrl}/sandbox/clock`, { advanceSeconds: EXECUTE_AFTER_SECONDS }),
    ]);
    const gatewayCpuMs = run.gateways.map((gateway, i) => cpuMs(gateway) - cpuBefore[i]!);
    gatewayCpuMs.forEach((spent, i) => (result.gatewayCpuMs[i]! += spent));
    result.gatewayCpuMsByEvent.push(gatewayCpuMs);
    run.clients.forEach((client, i) => (result.clientCpuMs += cpuMs(client) - clientsBefore[i]!));
    result.refundIds.push(expected);
    if (run.countBytes) result.bytesRead.push((await clientBytes()) - bytesBefore);
    if (arrival.status !== undefined && (arrival.status < 200 || arrival.status >= 300)) {
      throw new Error(`the gateway answered the webhook with HTTP ${arrival.status}`);
    }
    let last = 0;
    for (const received of times) {
      for (const at of received) {
        result.toEach.push(at - arrival.atMs);
        last = Math.max(last, at - arrival.atMs);
      }
    }
    result.toLast.push(last);
  }
  return result;
}

/** The two latency rows of a refund-events scenario: to the last subscriber per event (the target), and to each. */
export function latencyRows(scenario: string, toLastMetric: string, m: Pick<RefundEventsResult, 'toLast' | 'toEach'>, targetP99Ms: number): Row[] {
  const lastSorted = [...m.toLast].sort((a, b) => a - b);
  const eachSorted = Float64Array.from(m.toEach).sort();
  const p99Last = percentile(lastSorted, 0.99);
  const events = m.toLast.length;
  return [
    {
      scenario,
      metric: `${toLastMetric} (ms), p50 / p99 over ${events} events${events < 100 ? ' (p99 = the slowest)' : ''}`,
      bankgraph: `${fmt(percentile(lastSorted, 0.5), 1)} / ${fmt(p99Last, 1)}`,
      target: `p99 < ${targetP99Ms} ms`,
      verdict: verdict(p99Last < targetP99Ms),
    },
    {
      scenario,
      metric: "webhook arrival → each subscriber's message (ms), p50 / p99 over all messages",
      bankgraph: `${fmt(percentile(eachSorted, 0.5), 1)} / ${fmt(percentile(eachSorted, 0.99), 1)}`,
    },
  ];
}
