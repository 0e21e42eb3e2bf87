import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import type { BenchContext } from '../lib/context';
import type { ChildServer } from '../lib/child-server';
import { latencyRows, measureRefundEvents } from '../lib/refund-events';
import type { MemorySample } from '../lib/ipc.types';
import { wants } from '../lib/settings';
import { startBankgraph, startSandbox, startSubscriberClient } from '../lib/stacks';
import { monotonicMs } from '../lib/subscribers';
import { fmt } from '../lib/table';
import { WebhookRelay } from '../lib/webhook-relay';
import type { GatewayInfo } from '../servers/gateway.server';
import type { OpenArgs } from '../servers/subscribers.client';
import { refundFixture, SANDBOX_TIME_SCALE, SUBSCRIPTION } from './subscriptions';

const REDIS_URL = 'redis://127.0.0.1:6379';
/** Per subscriber process: with four processes, 100 connecting at once to each instance, as in scenario 4. */
const CONNECT_CONCURRENCY = 50;
const WARM_UP_SUBSCRIBERS = 20;
const EVENT_TIMEOUT_MS = 60_000;
// The target: the slowest event's last subscriber message, on either instance.
const TARGET_P99_MS = 250;

/**
 * Scenario 8 (`subscriptions-2x`): scenario 4 spread over two bankgraph instances, A and B, that share a store (one
 * SQLite file, as two processes on one host may) and Redis for events (PUBSUB_URL): N merchant subscribers on
 * refundUpdated of one payment, half on each instance, from several subscriber processes (one event loop could not
 * read tens of thousands of sockets without being the slowest part of what is measured). The refunds are made
 * through A and the webhooks reach A only, through the relay; A reads the refund back and publishes it on Redis,
 * and both instances fan it out to their own subscribers. Measured: from the webhook's arrival at the relay to the
 * last subscriber's message on either instance, on the machine's monotonic clock, read by every process.
 */
export async function runSubscriptions2x(ctx: BenchContext): Promise<void> {
  if (!wants(ctx.settings, 'subscriptions-2x')) return;
  const { children } = ctx;
  const { subscribers, events, clientProcesses, connectTimeoutS } = ctx.settings.subscriptions2x;
  await requireRedis();
  ctx.progress('subscriptions-2x: starting the sandbox and two bankgraph instances sharing a store and Redis');
  const dataDir = mkdtempSync(join(tmpdir(), 'bankgraph-bench-2x-'));
  const shared = {
    STORE_URL: `sqlite://${join(dataDir, 'gateway.sqlite')}`,
    PUBSUB_URL: REDIS_URL,
    // Both instances must read what the other stored (bank tokens are encrypted with it).
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
  const keyPrefix = `bankgraph-bench-${randomUUID().slice(0, 8)}:`;
  const sandbox = await startSandbox(children, 'sandbox (subscriptions-2x)', 0, {}, SANDBOX_TIME_SCALE);
  const started: ChildServer[] = [sandbox];
  try {
    // One after the other: the first runs the store's migrations.
    const a = await startBankgraph(children, sandbox, shared, 'bankgraph A', keyPrefix);
    started.push(a);
    const b = await startBankgraph(children, sandbox, shared, 'bankgraph B', keyPrefix);
    started.push(b);
    const instances = [a, b];
    const relay = await WebhookRelay.start(a.info.url, monotonicMs);
    try {
      const authorization = `Bearer ${a.info.merchantKey}`;
      const { paymentId, refund } = await refundFixture(sandbox.info.url, relay.url, a.info.url, authorization, events);
      // As in scenario 4: a refund exists before anyone subscribes, so each subscriber's first message says it is live.
      const firstRefundId = await refund(1);
      const clientOf = async (instance: ChildServer<GatewayInfo>, label: string): Promise<ChildServer> => {
        const client = await startSubscriberClient(children, label, {
          url: `${instance.info.url.replace(/^http/, 'ws')}/graphql`,
          authorization,
          query: SUBSCRIPTION,
          variables: { paymentId },
        });
        started.push(client);
        return client;
      };

      // Code paths compiled and pools open on both instances before the memory baseline, as in scenario 4.
      const warmUps = await Promise.all(instances.map((instance, i) => clientOf(instance, `warm-up subscribers ${'AB'[i]}`)));
      await Promise.all(
        warmUps.map((client) =>
          client.call('open', { count: WARM_UP_SUBSCRIBERS, concurrency: WARM_UP_SUBSCRIBERS, timeoutMs: 30_000 } satisfies OpenArgs, 40_000),
        ),
      );
      await children.close(...warmUps);
      const before = await Promise.all(instances.map((instance) => instance.memory(true)));

      // Client processes alternate between the instances; subscribers are split as evenly as they go.
      const clients = await Promise.all(
        Array.from({ length: clientProcesses }, (_, i) => clientOf(instances[i % 2]!, `subscribers ${i + 1} (on ${'AB'[i % 2]})`)),
      );
      const shares = clients.map((_, i) => Math.floor(subscribers / clientProcesses) + (i < subscribers % clientProcesses ? 1 : 0));
      const perInstance = [0, 1].map((which) => shares.filter((_, i) => i % 2 === which).reduce((sum, share) => sum + share, 0));
      ctx.progress(`subscriptions-2x: opening ${subscribers} subscribers (${perInstance.join(' on A, ')} on B) from ${clientProcesses} processes`);
      // One instance after the other: the one sandbox process answers every subscriber's first read of the refunds
      // (signature checks included), and both instances opening at once overran it (connections reset and refused,
      // then the gateway's circuit breaker opened): the sandbox's limit, not the gateway's.
      const openSeconds: number[] = [];
      for (const which of [0, 1]) {
        const openStarted = monotonicMs();
        const opening = clients.map((client, i) =>
          i % 2 !== which
            ? undefined
            : client.call(
                'open',
                { count: shares[i]!, concurrency: CONNECT_CONCURRENCY, timeoutMs: connectTimeoutS * 1000 } satisfies OpenArgs,
                (connectTimeoutS + 10) * 1000,
              ),
        );
        await Promise.all(opening);
        openSeconds.push((monotonicMs() - openStarted) / 1000);
      }
      const after = await Promise.all(instances.map((instance) => instance.memory(true)));

      const { toLast, toEach, gatewayCpuMs, clientCpuMs } = await measureRefundEvents(ctx, {
        label: 'subscriptions-2x',
        events,
        subscribers,
        firstRefundId,
        refund,
        sandboxUrl: sandbox.info.url,
        relay,
        gateways: instances,
        clients,
        eventTimeoutMs: EVENT_TIMEOUT_MS,
      });
      addRows(ctx, { subscribers, perInstance, clientProcesses, events, openSeconds, before, after, toLast, toEach, gatewayCpuMs, clientCpuMs });
    } finally {
      await relay.close();
    }
  } finally {
    await children.close(...started.reverse());
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Fails, with how to start it, when no Redis answers: this scenario is about instances sharing one. */
async function requireRedis(): Promise<void> {
  const client = createClient({ url: REDIS_URL, socket: { connectTimeout: 2_000, reconnectStrategy: false } });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    throw new Error(`subscriptions-2x needs Redis at ${REDIS_URL} (${String(error)}): start it with \`redis-server --daemonize yes --port 6379 --save ""\``, {
      cause: error,
    });
  } finally {
    await client.close().catch(() => client.destroy());
  }
}

interface Measured {
  subscribers: number;
  perInstance: number[];
  clientProcesses: number;
  events: number;
  /** Per instance. */
  openSeconds: number[];
  before: MemorySample[];
  after: MemorySample[];
  toLast: number[];
  toEach: number[];
  /** Each instance's CPU time from each trigger to the last message, summed over the events. */
  gatewayCpuMs: number[];
  /** The subscriber processes' CPU time over the same spans. */
  clientCpuMs: number;
}

function addRows(ctx: BenchContext, m: Measured): void {
  const scenario = `8. Subscriptions over 2 instances sharing Redis: ${fmt(m.subscribers)} graphql-ws subscribers (${fmt(m.perInstance[0]!)} on A, ${fmt(m.perInstance[1]!)} on B, from ${m.clientProcesses} client processes); ${m.events} refund_executed webhooks to A`;
  const perSubscription = [0, 1].map((i) => (m.after[i]!.rssBytes - m.before[i]!.rssBytes) / m.perInstance[i]!);
  const gc = m.after.every((sample) => sample.collected) ? 'after GC' : 'without GC';
  ctx.rows.push(
    ...latencyRows(scenario, "webhook arrival at A → last subscriber's message on either instance", m, TARGET_P99_MS),
    {
      scenario,
      metric:
        "CPU time per event, trigger to last message: instance A (webhook, read-back, publish, fan-out), instance B (fan-out); the bench's subscriber processes",
      bankgraph: `A ${fmt(m.gatewayCpuMs[0]! / m.events)} ms, B ${fmt(m.gatewayCpuMs[1]! / m.events)} ms; clients ${fmt(m.clientCpuMs / m.events)} ms`,
    },
    {
      scenario,
      metric: `RSS per idle subscription on each instance (RSS ${gc} with all subscribed − before, ÷ its subscribers)`,
      bankgraph: `A ${fmt(perSubscription[0]! / 1024, 1)} KB, B ${fmt(perSubscription[1]! / 1024, 1)} KB`,
    },
    {
      scenario,
      metric: `time to open each instance's subscriptions (A, then B; ${CONNECT_CONCURRENCY} connecting at a time per client process, ${(CONNECT_CONCURRENCY * m.clientProcesses) / 2} per instance)`,
      bankgraph: [0, 1].map((i) => `${'AB'[i]} ${fmt(m.openSeconds[i]!, 1)} s (${fmt(m.perInstance[i]! / m.openSeconds[i]!)} per s)`).join(', '),
    },
  );
}
