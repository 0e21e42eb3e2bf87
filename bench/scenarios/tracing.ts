import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChildServer } from '../lib/child-server';
import type { BenchContext } from '../lib/context';
import { waitUntilIdle } from '../lib/idle';
import { postGraphQL } from '../lib/http';
import { assertClean, runLoad, type LoadResult } from '../lib/load';
import { viewerGraphBody } from '../lib/queries';
import { wants } from '../lib/settings';
import { gatewaySession } from '../lib/sign-in';
import { startBankgraph, startSandbox } from '../lib/stacks';
import { fmt } from '../lib/table';
import type { GatewayInfo } from '../servers/gateway.server';

const USER = { username: 'user1', password: 'doe' };

/**
 * Scenario 6: what tracing costs. Two bankgraph processes on one sandbox (no latency), one with no OTEL_* set
 * (tracing off, the default), one exporting every span over OTLP/HTTP to a receiver in this process that accepts
 * and drops them. Each takes the same closed-loop load twice: the warm query (kept answers: the request span only)
 * and the query with Cache-Control: no-cache (executed, every provider call made: every kind of span). They run
 * off, on, off, so the two "off" runs show the run-to-run noise that a difference has to exceed to mean anything.
 */
export async function runTracing(ctx: BenchContext): Promise<void> {
  const { settings, children } = ctx;
  if (!wants(settings, 'tracing')) return;
  const { warm, tracing } = settings;
  ctx.progress('tracing: starting the sandbox, an OTLP receiver and bankgraph with tracing off and on');
  const receiver = await startReceiver();
  const sandbox = await startSandbox(children, 'sandbox (tracing)', 0, {
    extraUsers: 1,
    accountsPerUser: warm.accounts,
    transactionsPerAccount: warm.transactionsPerAccount,
    cardsPerUser: warm.cards,
  });
  const otlp = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'bankgraph-bench' };
  const [off, on] = await Promise.all([
    startBankgraph(children, sandbox, {}, 'bankgraph (tracing off)'),
    startBankgraph(children, sandbox, otlp, 'bankgraph (tracing on)'),
  ]);
  try {
    const body = viewerGraphBody(settings.first);
    const rows: { name: string; headers: Record<string, string> }[] = [
      { name: 'warm query (kept answer)', headers: {} },
      { name: 'executed query (no-cache: every provider call made)', headers: { 'cache-control': 'no-cache' } },
    ];
    const sessions = new Map<ChildServer<GatewayInfo>, string>();
    for (const gateway of [off, on]) {
      const session = await gatewaySession(gateway.info.url, USER.username, USER.password);
      sessions.set(gateway, session);
      // Fills the answer cache, so the warm runs measure what a repeated query costs.
      await postGraphQL(`${gateway.info.url}/graphql`, body, { authorization: `Bearer ${session}` });
    }
    const measure = async (gateway: ChildServer<GatewayInfo>, label: string, headers: Record<string, string>): Promise<LoadResult> => {
      ctx.progress(`tracing: ${label}, ${tracing.connections} connections, ${tracing.warmupS} s warm-up + ${tracing.durationS} s`);
      const common = {
        url: `${gateway.info.url}/graphql`,
        body,
        headers: { authorization: `Bearer ${sessions.get(gateway)!}`, ...headers },
        connections: tracing.connections,
      };
      assertClean(await runLoad({ ...common, durationS: tracing.warmupS, maxDurationS: tracing.warmupS + 10 }), `${label} warm-up`);
      await waitUntilIdle([off, on, sandbox]);
      const result = await runLoad({ ...common, durationS: tracing.durationS, maxDurationS: tracing.durationS + 20 });
      assertClean(result, label);
      await waitUntilIdle([off, on, sandbox]);
      return result;
    };
    for (const row of rows) {
      const first = await measure(off, `${row.name}, tracing off`, row.headers);
      const traced = await measure(on, `${row.name}, tracing on`, row.headers);
      const second = await measure(off, `${row.name}, tracing off again`, row.headers);
      addRows(ctx, row.name, first, traced, second);
    }
    ctx.progress(`tracing: the receiver got ${receiver.exports()} exports`);
  } finally {
    await children.close(off, on, sandbox);
    await new Promise<void>((resolve) => receiver.server.close(() => resolve()));
  }
}

function addRows(ctx: BenchContext, name: string, off: LoadResult, on: LoadResult, offAgain: LoadResult): void {
  const { tracing } = ctx.settings;
  const scenario = `6. Tracing cost: ${name} (${tracing.connections} connections, ${tracing.durationS} s per run; off, on, off again)`;
  const offRate = (off.requestsPerSecond + offAgain.requestsPerSecond) / 2;
  const noise = Math.abs(off.requestsPerSecond - offAgain.requestsPerSecond) / offRate;
  const costUs = (1 / on.requestsPerSecond - 1 / offRate) * 1e6;
  ctx.rows.push(
    {
      scenario,
      metric: 'throughput off / on / off again (req/s)',
      bankgraph: `${fmt(off.requestsPerSecond)} / ${fmt(on.requestsPerSecond)} / ${fmt(offAgain.requestsPerSecond)}`,
    },
    { scenario, metric: 'latency p50 off / on / off again (ms)', bankgraph: `${fmt(off.p50Ms, 2)} / ${fmt(on.p50Ms, 2)} / ${fmt(offAgain.p50Ms, 2)}` },
    {
      scenario,
      metric: 'tracing on: cost per query (gateway time, from throughput); noise between the off runs',
      bankgraph: `${fmt(costUs)} µs (${fmt((1 - on.requestsPerSecond / offRate) * 100, 1)} % of throughput); noise ${fmt(noise * 100, 1)} %`,
      verdict: 'stated',
    },
  );
}

/** An OTLP/HTTP endpoint that reads each export and answers 200, as a collector would, and keeps nothing. */
async function startReceiver(): Promise<{ server: Server; url: string; exports(): number }> {
  let count = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exports: () => count };
}
