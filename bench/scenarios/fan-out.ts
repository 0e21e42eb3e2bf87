import { performance } from 'node:perf_hooks';
import type { BenchContext } from '../lib/context';
import type { ChildServer } from '../lib/child-server';
import { percentile } from '../lib/load';
import { measureRefundEvents } from '../lib/refund-events';
import { wants } from '../lib/settings';
import { startBankgraph, startFanOutFloor, startSandbox, startSubscriberClient } from '../lib/stacks';
import { monotonicMs, TRANSPORTS, type Transport } from '../lib/subscribers';
import { fmt, median, type Row } from '../lib/table';
import { WebhookRelay } from '../lib/webhook-relay';
import type { Broadcast, BroadcastArgs } from '../servers/fan-out-floor.server';
import type { GatewayInfo } from '../servers/gateway.server';
import type { ExpectArgs, OpenArgs } from '../servers/subscribers.client';
import { refundFixture, SANDBOX_TIME_SCALE, SUBSCRIPTION } from './subscriptions';

const CONNECT_CONCURRENCY = 100;
/** As scenario 4: one event loop reading thousands of sockets would be the slowest part of what is measured. */
const SUBSCRIBER_PROCESSES = 2;
const EVENT_TIMEOUT_MS = 30_000;

const NAMES: Record<Transport, string> = {
  ws: 'WebSocket (graphql-ws)',
  sse: 'SSE (graphql-sse, distinct connections)',
  multipart: 'multipart HTTP (Apollo)',
};

/** One server's fan-out of the measured events to one transport's subscribers. */
interface FanOut {
  /** Per event: the server's CPU time from trigger to the last message, ms. */
  cpuMs: number[];
  /** The subscriber processes' CPU time over the same spans, ms per event (mean). */
  clientCpuMsPerEvent: number;
  /** Per event: the bytes all subscribers read over that span. */
  bytesRead: number[];
  /** Per event, to the last subscriber's message, ms. */
  toLast: number[];
}

interface Measured {
  transport: Transport;
  openSeconds: number;
  openCpuMs: number;
  bankgraph: FanOut;
  floor: FanOut;
}

/**
 * Scenario 9 (`fan-out`): what delivering one message costs bankgraph over each transport, beside the
 * least any server must spend to write that message. For each transport in turn, N subscribers on refundUpdated of
 * one payment (scenario 4's fixture and events: a refund executed by the sandbox's clock, its webhook relayed,
 * read back and published), then the same number of subscribers of that transport on the transport's floor
 * (bench/servers/fan-out-floor.server.ts), which writes the same bytes for the same refunds to every socket when
 * told to. Each process's CPU is its threads' time on a CPU (ChildServer.threadsCpuMs), from the trigger (the
 * sandbox's clock for bankgraph, the IPC call for the floor) to the last subscriber's message.
 */
export async function runFanOut(ctx: BenchContext): Promise<void> {
  if (!wants(ctx.settings, 'fan-out')) return;
  const { children } = ctx;
  const { subscribers, events } = ctx.settings.fanOut;
  ctx.progress('fan-out: starting the sandbox and bankgraph');
  const sandbox = await startSandbox(children, 'sandbox (fan-out)', 0, {}, SANDBOX_TIME_SCALE);
  const bankgraph = await startBankgraph(children, sandbox, ctx.settings.fastPaths ? undefined : { FAST_PATHS: 'off' });
  const relay = await WebhookRelay.start(bankgraph.info.url, monotonicMs);
  const authorization = `Bearer ${bankgraph.info.merchantKey}`;
  const measured: Measured[] = [];
  try {
    // Each transport's subscribers open on a refund of their own (their first message) and see `events` more.
    const fixture = await refundFixture(sandbox.info.url, relay.url, bankgraph.info.url, authorization, TRANSPORTS.length * (events + 1));
    let made = 0;
    const refund = (): Promise<string> => fixture.refund(++made);
    for (const transport of TRANSPORTS) {
      const firstRefundId = await refund();
      const variables = { paymentId: fixture.paymentId };
      const gateway = await measureBankgraph(ctx, transport, {
        bankgraph,
        sandboxUrl: sandbox.info.url,
        relay,
        authorization,
        variables,
        firstRefundId,
        refund,
      });
      const floor = await measureFloor(ctx, transport, { first: refundResult(firstRefundId, 'AUTHORIZED'), refundIds: gateway.refundIds, variables });
      measured.push({ transport, openSeconds: gateway.openSeconds, openCpuMs: gateway.openCpuMs, bankgraph: gateway.fanOut, floor });
    }
  } finally {
    await relay.close();
    await children.close(bankgraph, sandbox);
  }
  addRows(ctx, subscribers, events, measured);
}

/** The transport's subscribers on bankgraph: opened, then scenario 4's events, each measured. */
async function measureBankgraph(
  ctx: BenchContext,
  transport: Transport,
  run: {
    bankgraph: ChildServer<GatewayInfo>;
    sandboxUrl: string;
    relay: WebhookRelay;
    authorization: string;
    variables: Record<string, unknown>;
    firstRefundId: string;
    refund(): Promise<string>;
  },
): Promise<{ openSeconds: number; openCpuMs: number; fanOut: FanOut; refundIds: string[] }> {
  const { subscribers, events, connectTimeoutS } = ctx.settings.fanOut;
  const { bankgraph } = run;
  ctx.progress(`fan-out: ${subscribers} ${transport} subscribers on bankgraph`);
  const clients = await startClients(ctx, transport, endpoint(transport, bankgraph.info.url), run.authorization, run.variables);
  try {
    const openCpuBefore = bankgraph.threadsCpuMs();
    const openSeconds = await openAll(clients, subscribers, connectTimeoutS);
    const openCpuMs = bankgraph.threadsCpuMs() - openCpuBefore;
    const measured = await measureRefundEvents(ctx, {
      label: `fan-out ${transport}`,
      events,
      subscribers,
      firstRefundId: run.firstRefundId,
      refund: run.refund,
      sandboxUrl: run.sandboxUrl,
      relay: run.relay,
      gateways: [bankgraph],
      clients,
      eventTimeoutMs: EVENT_TIMEOUT_MS,
      cpuMs: (process) => process.threadsCpuMs(),
      countBytes: true,
    });
    const fanOut: FanOut = {
      cpuMs: measured.gatewayCpuMsByEvent.map(([cpu]) => cpu!),
      clientCpuMsPerEvent: measured.clientCpuMs / events,
      bytesRead: measured.bytesRead,
      toLast: measured.toLast,
    };
    return { openSeconds, openCpuMs, fanOut, refundIds: measured.refundIds };
  } finally {
    await ctx.children.close(...clients);
  }
}

/** The transport's endpoint on a server at `httpUrl`: the floors answer on any path. */
function endpoint(transport: Transport, httpUrl: string): string {
  if (transport === 'ws') return `${httpUrl.replace(/^http/, 'ws')}/graphql`;
  return transport === 'sse' ? `${httpUrl}/graphql/stream` : `${httpUrl}/graphql`;
}

function refundResult(id: string, status: string): object {
  return { data: { refundUpdated: { id, status } } };
}

async function startClients(
  ctx: BenchContext,
  transport: Transport,
  url: string,
  authorization: string,
  variables: Record<string, unknown>,
): Promise<ChildServer[]> {
  const clients: ChildServer[] = [];
  try {
    for (let i = 0; i < SUBSCRIBER_PROCESSES; i++) {
      clients.push(
        await startSubscriberClient(ctx.children, `${transport} subscribers ${i + 1}`, { transport, url, authorization, query: SUBSCRIPTION, variables }),
      );
    }
  } catch (error) {
    await ctx.children.close(...clients);
    throw error;
  }
  return clients;
}

/** Opens `subscribers` from the client processes, shared out, 100 connecting at a time: the seconds it took. */
async function openAll(clients: ChildServer[], subscribers: number, connectTimeoutS: number): Promise<number> {
  const started = performance.now();
  await Promise.all(
    clients.map((client, i) =>
      client.call(
        'open',
        {
          count: Math.floor(subscribers / clients.length) + (i < subscribers % clients.length ? 1 : 0),
          concurrency: CONNECT_CONCURRENCY / clients.length,
          timeoutMs: connectTimeoutS * 1000,
        } satisfies OpenArgs,
        (connectTimeoutS + 10) * 1000,
      ),
    ),
  );
  return (performance.now() - started) / 1000;
}

/** The transport's floor: as many subscribers, the same results written to each, timed as bankgraph's were. */
async function measureFloor(
  ctx: BenchContext,
  transport: Transport,
  run: { first: object; refundIds: string[]; variables: Record<string, unknown> },
): Promise<FanOut> {
  const { subscribers, connectTimeoutS } = ctx.settings.fanOut;
  const floor = await startFanOutFloor(ctx.children, { transport, first: run.first });
  const clients: ChildServer[] = [];
  const result: FanOut = { cpuMs: [], clientCpuMsPerEvent: 0, bytesRead: [], toLast: [] };
  try {
    ctx.progress(`fan-out: ${subscribers} ${transport} subscribers on the floor`);
    clients.push(...(await startClients(ctx, transport, endpoint(transport, floor.info.url), 'Bearer floor', run.variables)));
    await openAll(clients, subscribers, connectTimeoutS);
    const open = await floor.call<number>('count', null, 10_000);
    if (open !== subscribers) throw new Error(`the ${transport} floor has ${open} subscribers, not ${subscribers}`);
    const bytes = async (): Promise<number> =>
      (await Promise.all(clients.map((client) => client.call<number>('bytes', null, 10_000)))).reduce((a, b) => a + b, 0);
    for (const refundId of run.refundIds) {
      await Promise.all(
        clients.map((client) => client.call('arm', { refundId, status: 'EXECUTED', timeoutMs: EVENT_TIMEOUT_MS } satisfies ExpectArgs, 10_000)),
      );
      const bytesBefore = await bytes();
      const cpuBefore = floor.threadsCpuMs();
      const clientsBefore = clients.map((client) => client.threadsCpuMs());
      const [broadcast, times] = await Promise.all([
        floor.call<Broadcast>('broadcast', { result: refundResult(refundId, 'EXECUTED') } satisfies BroadcastArgs, 10_000),
        Promise.all(clients.map((client) => client.call<number[]>('collect', null, EVENT_TIMEOUT_MS + 10_000))),
      ]);
      result.cpuMs.push(floor.threadsCpuMs() - cpuBefore);
      result.clientCpuMsPerEvent += clients.reduce((sum, client, i) => sum + client.threadsCpuMs() - clientsBefore[i]!, 0) / run.refundIds.length;
      result.bytesRead.push((await bytes()) - bytesBefore);
      result.toLast.push(Math.max(...times.flat()) - broadcast.atMs);
    }
  } finally {
    await ctx.children.close(...clients);
    await ctx.children.close(floor);
  }
  return result;
}

function addRows(ctx: BenchContext, subscribers: number, events: number, measured: Measured[]): void {
  const scenario =
    `9. Fan-out per transport: ${fmt(subscribers)} subscribers per transport (one socket each) on refundUpdated of one payment, ` +
    `${events} refund_executed webhooks each; the ceiling column is the transport's floor: a node:http server writing the same bytes to as many sockets` +
    (ctx.settings.fastPaths ? '' : '; bankgraph with its fast paths off (FAST_PATHS=off, `--fast-paths=off`)');
  const perMessage = (ms: number): number => (ms / subscribers) * 1000;
  const spread = (values: number[], digits: number): string =>
    `${fmt(median(values), digits)} (${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)})`;
  const rows: Row[] = measured.flatMap(({ transport, openSeconds, openCpuMs, bankgraph, floor }) => {
    const name = NAMES[transport];
    const ours = bankgraph.cpuMs.map(perMessage);
    const theirs = floor.cpuMs.map(perMessage);
    const lastSorted = (values: number[]): number[] => [...values].sort((a, b) => a - b);
    const toLast = (m: FanOut): string => `${fmt(percentile(lastSorted(m.toLast), 0.5), 1)} / ${fmt(percentile(lastSorted(m.toLast), 0.99), 1)}`;
    const bytesPerMessage = (m: FanOut): number => median(m.bytesRead) / subscribers;
    return [
      {
        scenario,
        metric: `${name}: process CPU per delivered message (µs), median (range) of the events; bankgraph from the sandbox's clock to the last message, the floor from its broadcast call`,
        bankgraph: spread(ours, 2),
        ceiling: spread(theirs, 2),
      },
      { scenario, metric: `${name}: bankgraph's CPU per delivered message ÷ the floor's (medians)`, bankgraph: `${fmt(median(ours) / median(theirs), 1)}×` },
      {
        scenario,
        metric: `${name}: to the last subscriber's message (ms), p50 / p99 over ${events} events (bankgraph from the webhook's arrival, the floor from its first write)`,
        bankgraph: toLast(bankgraph),
        ceiling: toLast(floor),
      },
      {
        scenario,
        metric: `${name}: bytes each subscriber read per event (framing included), median; the bench's subscriber processes' CPU per message (µs), mean`,
        bankgraph: `${fmt(bytesPerMessage(bankgraph), 1)} B; clients ${fmt(perMessage(bankgraph.clientCpuMsPerEvent), 2)} µs`,
        ceiling: `${fmt(bytesPerMessage(floor), 1)} B; clients ${fmt(perMessage(floor.clientCpuMsPerEvent), 2)} µs`,
        // Within a byte: a heartbeat written in an event's span adds a few bytes to that one subscriber.
        verdict:
          Math.abs(bytesPerMessage(bankgraph) - bytesPerMessage(floor)) < 1 ? 'same bytes' : '**bytes differ: the floor is not writing what bankgraph writes**',
      },
      {
        scenario,
        metric: `${name}: time to open the subscriptions (${CONNECT_CONCURRENCY} connecting at a time); bankgraph's CPU per subscription opened`,
        bankgraph: `${fmt(openSeconds, 1)} s; ${fmt((openCpuMs / subscribers) * 1000)} µs`,
      },
    ];
  });
  ctx.rows.push(...rows);
}
