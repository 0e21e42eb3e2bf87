import type { ChildServer } from '../lib/child-server';
import type { BenchContext } from '../lib/context';
import type { HttpStreamTransport } from '../lib/http-stream-subscription';
import { latencyRows, measureRefundEvents, type RefundEventsResult } from '../lib/refund-events';
import { wants } from '../lib/settings';
import { startBankgraph, startSandbox, startStreamFloor, startSubscriberClient } from '../lib/stacks';
import { monotonicMs } from '../lib/subscribers';
import { fmt } from '../lib/table';
import { WebhookRelay } from '../lib/webhook-relay';
import type { ExpectArgs, OpenArgs, SubscribersInit } from '../servers/subscribers.client';
import { refundFixture, SANDBOX_TIME_SCALE, SUBSCRIPTION } from './subscriptions';

const SUBSCRIBER_PROCESSES = 2;
const CONNECT_CONCURRENCY = 100;
const EVENT_TIMEOUT_MS = 30_000;
/** Scenario 4's target, so the three transports read against one figure. */
const TARGET_P99_MS = 100;
const TRANSPORTS: readonly HttpStreamTransport[] = ['sse', 'multipart'];

/**
 * Scenarios 9 and 10: scenario 4's fan-out (N merchant subscribers on refundUpdated of one payment, each event a
 * refund executed by the sandbox) with the subscribers on GraphQL over SSE, then on Apollo's multipart HTTP
 * subscriptions, one response each. Then the same subscriber processes against that transport's floor
 * (bench/servers/stream-floor.server.ts: node:http writing the same bytes to as many responses), events triggered
 * directly. Reported: bankgraph's CPU per delivered message, the floor's, and their ratio.
 */
export async function runSubscriptionsHttp(ctx: BenchContext): Promise<void> {
  if (!wants(ctx.settings, 'subscriptions-http')) return;
  const { children } = ctx;
  const { subscribers, events } = ctx.settings.subscriptions;
  ctx.progress('subscriptions over HTTP: starting the sandbox and bankgraph');
  const sandbox = await startSandbox(children, 'sandbox (subscriptions over HTTP)', 0, {}, SANDBOX_TIME_SCALE);
  const bankgraph = await startBankgraph(children, sandbox);
  const relay = await WebhookRelay.start(bankgraph.info.url, monotonicMs);
  const authorization = `Bearer ${bankgraph.info.merchantKey}`;
  try {
    const fixture = await refundFixture(sandbox.info.url, relay.url, bankgraph.info.url, authorization, (events + 1) * TRANSPORTS.length);
    let made = 0;
    const refund = (): Promise<string> => fixture.refund(++made);
    for (const [i, transport] of TRANSPORTS.entries()) {
      const init: SubscribersInit = {
        wsUrl: `${bankgraph.info.url}${transport === 'sse' ? '/graphql/stream' : '/graphql'}`,
        transport,
        authorization,
        query: SUBSCRIPTION,
        variables: { paymentId: fixture.paymentId },
      };
      // A refund before anyone subscribes: every subscriber's first message (its current state) says it is live.
      const firstRefundId = await refund();
      const measured = await withClients(ctx, init, async (clients) => {
        ctx.progress(`subscriptions over ${transport}: ${subscribers} subscribers on bankgraph`);
        return measureRefundEvents(ctx, {
          label: `subscriptions over ${transport}`,
          events,
          subscribers,
          firstRefundId,
          refund,
          sandboxUrl: sandbox.info.url,
          relay,
          gateways: [bankgraph],
          clients,
          eventTimeoutMs: EVENT_TIMEOUT_MS,
        });
      });
      const floorCpuMs = await measureFloor(ctx, transport, init, firstRefundId);
      addRows(ctx, 9 + i, transport, subscribers, events, measured, floorCpuMs);
    }
  } finally {
    await relay.close();
    await children.close(bankgraph, sandbox);
  }
}

/** Starts the subscriber processes on `init`, opens the run's subscribers, runs `measure`, and closes them all. */
async function withClients<T>(ctx: BenchContext, init: SubscribersInit, measure: (clients: ChildServer[]) => Promise<T>): Promise<T> {
  const { subscribers, connectTimeoutS } = ctx.settings.subscriptions;
  const clients: ChildServer[] = [];
  try {
    for (let i = 0; i < SUBSCRIBER_PROCESSES; i++) clients.push(await startSubscriberClient(ctx.children, `${init.transport} subscribers ${i + 1}`, init));
    await Promise.all(
      clients.map((client, i) =>
        client.call(
          'open',
          {
            count: Math.floor(subscribers / SUBSCRIBER_PROCESSES) + (i < subscribers % SUBSCRIBER_PROCESSES ? 1 : 0),
            concurrency: CONNECT_CONCURRENCY / SUBSCRIBER_PROCESSES,
            timeoutMs: connectTimeoutS * 1000,
          } satisfies OpenArgs,
          (connectTimeoutS + 10) * 1000,
        ),
      ),
    );
    return await measure(clients);
  } finally {
    await ctx.children.close(...clients);
  }
}

/** The floor's CPU time over the run's events, each from the trigger to every subscriber's message. */
async function measureFloor(ctx: BenchContext, transport: HttpStreamTransport, init: SubscribersInit, refundIdShape: string): Promise<number> {
  const { subscribers, events } = ctx.settings.subscriptions;
  const floor = await startStreamFloor(ctx.children, { transport });
  try {
    // Ids as long as bankgraph's, so every message is the same size as the one it stands for.
    const idOf = (event: number): string => `${refundIdShape.slice(0, -6)}${String(event).padStart(6, '0')}`;
    const result = (event: number): unknown => ({ data: { refundUpdated: { id: idOf(event), status: 'EXECUTED' } } });
    await floor.call('state', { result: result(0) }, 10_000);
    const url = `${floor.info.url}${transport === 'sse' ? '/graphql/stream' : '/graphql'}`;
    return await withClients(ctx, { ...init, wsUrl: url }, async (clients) => {
      ctx.progress(`subscriptions over ${transport}: ${subscribers} subscribers on the floor`);
      let cpuMs = 0;
      for (let event = 1; event <= events; event++) {
        const expectArgs: ExpectArgs = { refundId: idOf(event), status: 'EXECUTED', timeoutMs: EVENT_TIMEOUT_MS };
        await Promise.all(clients.map((client) => client.call('arm', expectArgs, 10_000)));
        const before = floor.cpuMs();
        await Promise.all([
          floor.call('fanOut', { result: result(event) }, 10_000),
          ...clients.map((client) => client.call('collect', null, EVENT_TIMEOUT_MS + 10_000)),
        ]);
        cpuMs += floor.cpuMs() - before;
      }
      return cpuMs;
    });
  } finally {
    await ctx.children.close(floor);
  }
}

function addRows(
  ctx: BenchContext,
  n: number,
  transport: HttpStreamTransport,
  subscribers: number,
  events: number,
  m: RefundEventsResult,
  floorCpuMs: number,
): void {
  const what =
    transport === 'sse'
      ? 'GraphQL over SSE subscribers (/graphql/stream)'
      : 'Apollo multipart subscribers (/graphql, Accept: multipart/mixed;subscriptionSpec=1.0)';
  const scenario = `${n}. Subscriptions over HTTP: ${fmt(subscribers)} ${what}, one response each, on refundUpdated of one payment; ${events} refund_executed webhooks`;
  const perMessage = (cpuMs: number): number => (cpuMs / events / subscribers) * 1000;
  const bankgraphUs = perMessage(m.gatewayCpuMs[0]!);
  const floorUs = perMessage(floorCpuMs);
  ctx.rows.push(...latencyRows(scenario, "webhook arrival → last subscriber's message", m, TARGET_P99_MS), {
    scenario,
    metric:
      "CPU time per delivered message, trigger to last message (bankgraph's includes the webhook and the refund's read-back); node:http ceiling column: the floor, node:http writing the same bytes to as many responses; bankgraph ÷ floor",
    bankgraph: `${fmt(bankgraphUs, 1)} µs (${fmt(m.gatewayCpuMs[0]! / events)} ms per event); ${fmt(bankgraphUs / floorUs, 1)}× the floor`,
    ceiling: `${fmt(floorUs, 1)} µs (${fmt(floorCpuMs / events)} ms per event)`,
  });
}
