import { performance } from 'node:perf_hooks';
import type { BenchContext } from '../lib/context';
import { expectData, json, postGraphQL } from '../lib/http';
import { latencyRows, measureRefundEvents } from '../lib/refund-events';
import type { MemorySample } from '../lib/ipc.types';
import { wants } from '../lib/settings';
import type { ChildServer } from '../lib/child-server';
import { startBankgraph, startSandbox, startSubscriberClient } from '../lib/stacks';
import { monotonicMs, type RefundUpdate } from '../lib/subscribers';
import type { OpenArgs } from '../servers/subscribers.client';
import { fmt, verdict } from '../lib/table';
import { WebhookRelay } from '../lib/webhook-relay';

// The provider's refund id, which the webhooks name too: the bench matches each event's webhook and pushes by it.
export const SUBSCRIPTION = 'subscription RefundUpdated($paymentId: ID!) { refundUpdated(paymentId: $paymentId) { id: refundId status } }';
const REFUND = 'mutation Refund($input: RefundPaymentInput!) { refundPayment(input: $input) { id: refundId status } }';
/**
 * The sandbox's clock nearly stopped: the refund made before subscribing is the first event, and at real speed the
 * sandbox executed it by itself once opening the subscribers took over 60 s (as on a loaded machine), before the
 * bench triggered and watched for it. Only POST /sandbox/clock moves sandbox time forward then.
 */
export const SANDBOX_TIME_SCALE = 0.001;
const CONNECT_CONCURRENCY = 100;
/**
 * The subscribers' own processes: on the bench's one event loop, thousands of clients would be the slowest part of
 * what is measured.
 */
const SUBSCRIBER_PROCESSES = 2;
const EVENT_TIMEOUT_MS = 30_000;
// The targets: the slowest event's last subscriber message, memory per idle subscription, time to open them all.
const TARGET_P99_MS = 100;
const TARGET_BYTES_PER_SUBSCRIPTION = 10 * 1024;
const TARGET_OPEN_SECONDS = 3;

interface FixturePayment {
  id: string;
  status: string;
  amount_in_minor: number;
}

/**
 * Scenario 4: N merchant subscribers on refundUpdated(paymentId) of one settled payment. Each event is a new
 * 1-penny refund of it, made through the gateway (authorized at once: the payment is settled), then executed by
 * advancing the sandbox clock 61 s; the sandbox sends refund_executed, the gateway reads the refund back and
 * publishes it. Measured: from the webhook's arrival (through a loopback relay) to each subscriber's message, and
 * to the last one, on the machine's monotonic clock (the subscribers run in processes of their own).
 */
export async function runSubscriptions(ctx: BenchContext): Promise<void> {
  if (!wants(ctx.settings, 'subscriptions')) return;
  const { children } = ctx;
  const { subscribers, events, connectTimeoutS } = ctx.settings.subscriptions;
  ctx.progress('subscriptions: starting the sandbox and bankgraph');
  const sandbox = await startSandbox(children, 'sandbox (subscriptions)', 0, {}, SANDBOX_TIME_SCALE);
  const bankgraph = await startBankgraph(children, sandbox);
  // Subscribers run in other processes and time their messages on the machine's monotonic clock: so does the relay.
  const relay = await WebhookRelay.start(bankgraph.info.url, monotonicMs);
  const merchant = { authorization: `Bearer ${bankgraph.info.merchantKey}` };
  const wsUrl = `${bankgraph.info.url.replace(/^http/, 'ws')}/graphql`;
  const started: ChildServer[] = [];
  try {
    const { paymentId, refund } = await refundFixture(sandbox.info.url, relay.url, bankgraph.info.url, merchant.authorization, events);
    // The payment has a refund before anyone subscribes, so every subscriber's first message (its current state)
    // tells the bench that its subscription is live.
    const firstRefundId = await refund(1);

    ctx.progress(`subscriptions: starting ${SUBSCRIBER_PROCESSES} subscriber processes`);
    const clients = await Promise.all(
      Array.from({ length: SUBSCRIBER_PROCESSES }, async (_, i) => {
        const client = await startSubscriberClient(children, `subscribers ${i + 1}`, {
          url: wsUrl,
          authorization: merchant.authorization,
          query: SUBSCRIPTION,
          variables: { paymentId },
        });
        started.push(client);
        return client;
      }),
    );
    const shares = clients.map((_, i) => Math.floor(subscribers / SUBSCRIBER_PROCESSES) + (i < subscribers % SUBSCRIBER_PROCESSES ? 1 : 0));
    const openAll = (): Promise<unknown> =>
      Promise.all(
        clients.map((client, i) =>
          client.call(
            'open',
            { count: shares[i]!, concurrency: CONNECT_CONCURRENCY / SUBSCRIBER_PROCESSES, timeoutMs: connectTimeoutS * 1000 } satisfies OpenArgs,
            (connectTimeoutS + 10) * 1000,
          ),
        ),
      );

    // The memory baseline is a gateway that has served this many subscribers before, as the soak's is one that has
    // served a batch: a first round opened and closed, unmeasured. Without it the baseline has the young generation
    // (which any load grows to its working size, and which stays that size) at its start-up size, and that growth
    // would be counted as the subscribers'.
    ctx.progress(`subscriptions: a warm-up round of ${subscribers} subscribers, opened and closed`);
    const fresh = await bankgraph.memory(true);
    await openAll();
    const firstRound = { before: fresh, after: await bankgraph.memory(true) };
    await Promise.all(clients.map((client) => client.call('reset', null, 60_000)));
    await waitForNoWebSockets(bankgraph.info.url, bankgraph.info.metricsToken);
    const before = await bankgraph.memory(true);

    ctx.progress(`subscriptions: opening ${subscribers} subscribers from ${SUBSCRIBER_PROCESSES} processes, ${CONNECT_CONCURRENCY} at a time`);
    const openStarted = performance.now();
    const openCpuBefore = bankgraph.cpuMs();
    await openAll();
    const openSeconds = (performance.now() - openStarted) / 1000;
    const openCpuMs = bankgraph.cpuMs() - openCpuBefore;
    const after = await bankgraph.memory(true);

    const measured = await measureRefundEvents(ctx, {
      label: 'subscriptions',
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
    const { toLast, toEach, clientCpuMs } = measured;
    const gatewayCpuMs = measured.gatewayCpuMs[0]!;
    addRows(ctx, { subscribers, events, openSeconds, openCpuMs, before, after, firstRound, toLast, toEach, gatewayCpuMs, clientCpuMs });
  } finally {
    await relay.close();
    await children.close(...started.reverse(), bankgraph, sandbox);
  }
}

/**
 * Points the sandbox's payments webhooks at `relayUrl` and picks a settled payment with room for `events` 1-penny
 * refunds; `refund(n)` makes the n-th through the gateway (authorized at once) and answers its id.
 */
export async function refundFixture(
  sandboxUrl: string,
  relayUrl: string,
  gatewayUrl: string,
  authorization: string,
  events: number,
): Promise<{ paymentId: string; refund(n: number): Promise<string> }> {
  await json('POST', `${sandboxUrl}/sandbox/config`, { paymentsWebhookUrl: `${relayUrl}/webhooks/payments` });
  const { payments } = await json<{ payments: FixturePayment[] }>('GET', `${sandboxUrl}/sandbox/fixtures`);
  const payment = payments.find((candidate) => candidate.status === 'settled' && candidate.amount_in_minor > events);
  if (!payment) throw new Error('the sandbox has no settled payment to refund');
  return {
    paymentId: payment.id,
    async refund(n) {
      const answer = await postGraphQL<{ refundPayment: RefundUpdate }>(
        `${gatewayUrl}/graphql`,
        JSON.stringify({ query: REFUND, variables: { input: { paymentId: payment.id, amountInMinor: 1, reference: `bench ${n}` } } }),
        { authorization },
      );
      return expectData(answer, 'refundPayment').refundPayment.id;
    },
  };
}

interface Measured {
  subscribers: number;
  events: number;
  openSeconds: number;
  /** bankgraph's CPU time while they opened: what opening costs it, less at the mercy of other load than the wall time. */
  openCpuMs: number;
  before: MemorySample;
  after: MemorySample;
  /** The warm-up round's, from the gateway as started: shown beside the measured round's. */
  firstRound: { before: MemorySample; after: MemorySample };
  toLast: number[];
  toEach: number[];
  /** bankgraph's CPU time from each trigger to the last message, summed over the events. */
  gatewayCpuMs: number;
  /** The subscriber processes' CPU time over the same spans: the bench's own share of the measured time. */
  clientCpuMs: number;
}

function addRows(ctx: BenchContext, m: Measured): void {
  const scenario = `4. Subscriptions: ${fmt(m.subscribers)} graphql-ws subscribers (one socket each) on refundUpdated of one payment; ${m.events} refund_executed webhooks`;
  const rssPer = (m.after.rssBytes - m.before.rssBytes) / m.subscribers;
  const heapPer = (m.after.heapUsedBytes - m.before.heapUsedBytes) / m.subscribers;
  const firstRssPer = (m.firstRound.after.rssBytes - m.firstRound.before.rssBytes) / m.subscribers;
  const gc = m.after.collected ? 'after GC' : 'without GC';
  ctx.rows.push(
    ...latencyRows(scenario, "webhook arrival → last subscriber's message", m, TARGET_P99_MS),
    {
      scenario,
      metric: "CPU time per event, trigger to last message: bankgraph (and per subscriber message); the bench's own subscriber clients",
      bankgraph: `${fmt(m.gatewayCpuMs / m.events)} ms (${fmt((m.gatewayCpuMs / m.events / m.subscribers) * 1000)} µs per message); clients ${fmt(m.clientCpuMs / m.events)} ms`,
    },
    {
      scenario,
      metric: `RSS per idle subscription on a gateway that has served as many before (RSS ${gc} with all subscribed − before, ÷ N; the first round's, from start, in parentheses); JS heap per subscription`,
      bankgraph: `${fmt(rssPer / 1024, 1)} KB (first round ${fmt(firstRssPer / 1024, 1)} KB); heap ${fmt(heapPer / 1024, 1)} KB`,
      target: `< ${TARGET_BYTES_PER_SUBSCRIPTION / 1024} KB`,
      verdict: verdict(rssPer < TARGET_BYTES_PER_SUBSCRIPTION),
    },
    {
      scenario,
      metric: `time to open all subscriptions (${CONNECT_CONCURRENCY} connecting at a time; the current state from the payment's refunds, one provider read shared while no event came, for up to 1 s after it); bankgraph's CPU time per subscription opened`,
      bankgraph: `${fmt(m.openSeconds, 1)} s (${fmt(m.subscribers / m.openSeconds)} per s); CPU ${fmt((m.openCpuMs / m.subscribers) * 1000)} µs`,
      target: `< ${TARGET_OPEN_SECONDS} s`,
      verdict: verdict(m.openSeconds < TARGET_OPEN_SECONDS),
    },
  );
}

/** Polls the gateway's /metrics until it has no WebSocket open: the warm-up round's sockets are all closed there. */
async function waitForNoWebSockets(gatewayUrl: string, metricsToken: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let open = Number.NaN;
  while (Date.now() < deadline) {
    const metrics = await (await fetch(`${gatewayUrl}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
    open = Number(/^bankgraph_websocket_connections (\S+)$/m.exec(metrics)?.[1]);
    if (open === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the gateway still had ${open} WebSockets open ${timeoutMs} ms after every warm-up subscriber closed`);
}
