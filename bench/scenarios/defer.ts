import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { isDeepStrictEqual } from 'node:util';
import { expectListsOnly, expectShape } from '../lib/answers';
import type { BenchContext } from '../lib/context';
import { expectData, postGraphQL } from '../lib/http';
import { DEFER_ACCEPT, mergePayloads, payloadsOfBody, postDeferred } from '../lib/multipart-payloads';
import { callShape, clearProviderLog, readProviderLog, type CallShape } from '../lib/provider-log';
import { VIEWER_GRAPH, VIEWER_GRAPH_DEFERRED, viewerGraphBody, viewerGraphDeferredBody, type ViewerGraphData } from '../lib/queries';
import { wants } from '../lib/settings';
import { gatewaySession } from '../lib/sign-in';
import { startBankgraph, startSandbox } from '../lib/stacks';
import { fmt, median, verdict, type Row } from '../lib/table';

const USER = { username: 'user1', password: 'doe' };
/** The issue's bounds: the first payload within this many provider latencies, the last within this multiple of the query without @defer. */
const MAX_FIRST_ROUND_TRIPS = 1.3;
const MAX_LAST_RATIO = 1.1;
const MAX_CPU_RATIO = 1.3;

type Kind = 'plain' | 'deferred';

interface ColdRuns {
  /** Without @defer: request to the whole answer. */
  plainMs: number[];
  /** With @defer: request to the first payload, and to the last. */
  firstMs: number[];
  lastMs: number[];
  /** Payloads per deferred answer. */
  payloads: number[];
  shapes: Record<Kind, CallShape[]>;
}

interface Measured {
  queries: number;
  cpuUsPerQuery: number;
}

/**
 * Scenario 10: the nested query with every account's and card's balance and transactions deferred, beside the
 * same query without @defer. First, cold, at the cold scenario's provider latency: each query with
 * `Cache-Control: no-cache`, so nothing it reads comes from the data cache; time to the first and to the last payload. Then the CPU each costs the gateway to execute, under closed-loop load.
 */
export async function runDefer(ctx: BenchContext): Promise<void> {
  if (!wants(ctx.settings, 'defer')) return;
  const cold = await measureCold(ctx);
  const cpu = await measureCpu(ctx);
  ctx.rows.push(...coldRows(ctx, cold), ...cpuRows(ctx, cpu));
}

async function measureCold(ctx: BenchContext): Promise<ColdRuns> {
  const { children, settings } = ctx;
  const { warm, cold, defer, first } = settings;
  ctx.progress(`defer: starting a sandbox with ${cold.latencyMs} ms latency and bankgraph`);
  const sandbox = await startSandbox(children, 'sandbox (defer, cold)', cold.latencyMs, {
    extraUsers: 1,
    accountsPerUser: warm.accounts,
    transactionsPerAccount: warm.transactionsPerAccount,
    cardsPerUser: warm.cards,
  });
  const bankgraph = await startBankgraph(children, sandbox);
  try {
    const url = `${bankgraph.info.url}/graphql`;
    const bodies: Record<Kind, string> = { plain: viewerGraphBody(first), deferred: viewerGraphDeferredBody(first) };
    // One session for every query, as scenario 2 asks: `Cache-Control: no-cache` keeps each query cold (the provider
    // log below proves it), and one query without provider reads has the session looked up and remembered first.
    const sent = { authorization: `Bearer ${await gatewaySession(bankgraph.info.url, USER.username, USER.password)}`, 'cache-control': 'no-cache' };
    expectData(await postGraphQL(url, JSON.stringify({ query: '{ __typename }' }), sent), 'defer, a query on the session');
    const runs: ColdRuns = { plainMs: [], firstMs: [], lastMs: [], payloads: [], shapes: { plain: [], deferred: [] } };
    const once = async (kind: Kind, measured: boolean): Promise<Record<string, unknown>> => {
      const what = `defer, cold query ${kind === 'plain' ? 'without' : 'with'} @defer`;
      await clearProviderLog(sandbox.info.url);
      let data: Record<string, unknown>;
      if (kind === 'plain') {
        const started = performance.now();
        const answer = await postGraphQL<ViewerGraphData>(url, bodies.plain, sent);
        const wallMs = performance.now() - started;
        const plain = expectData(answer, what);
        expectShape(plain, warm.accounts, warm.cards, first, what);
        if (measured) runs.plainMs.push(wallMs);
        data = plain as unknown as Record<string, unknown>;
      } else {
        const timed = await postDeferred(url, bodies.deferred, sent);
        expectListsOnly(timed[0]?.payload.data ?? {}, warm.accounts, warm.cards, what);
        data = mergePayloads(
          timed.map((part) => part.payload),
          what,
        );
        expectShape(data as unknown as ViewerGraphData, warm.accounts, warm.cards, first, what);
        if (measured) {
          runs.firstMs.push(timed[0]!.atMs);
          runs.lastMs.push(timed.at(-1)!.atMs);
          runs.payloads.push(timed.length);
        }
      }
      if (measured) runs.shapes[kind].push(callShape(await readProviderLog(sandbox.info.url)));
      return data;
    };
    // One unmeasured query of each first: a gateway that has been up a while has its code compiled and its sockets open.
    if (!isDeepStrictEqual(await once('plain', false), await once('deferred', false)))
      throw new Error('defer: the deferred payloads merged are not the answer without @defer');
    ctx.progress(`defer: ${defer.runs} cold queries with @defer and ${defer.runs} without, alternating`);
    for (let run = 0; run < defer.runs; run++) {
      const order: Kind[] = run % 2 === 0 ? ['plain', 'deferred'] : ['deferred', 'plain'];
      const answers = [await once(order[0]!, true), await once(order[1]!, true)];
      if (!isDeepStrictEqual(answers[0], answers[1])) throw new Error('defer: the deferred payloads merged are not the answer without @defer');
    }
    return runs;
  } finally {
    await children.close(bankgraph, sandbox);
  }
}

/**
 * Gateway CPU per executed query, with and without @defer, against a latency-free sandbox: both POSTed with
 * `Cache-Control: no-cache`, so each is executed with all its provider calls, as scenario 7 measures; what differs
 * is @defer. Alternating rounds, as scenario 7b.
 */
async function measureCpu(ctx: BenchContext): Promise<{ plain: Measured; deferred: Measured }[]> {
  const { children, settings } = ctx;
  const { warm, defer, first } = settings;
  ctx.progress('defer: starting a latency-free sandbox and bankgraph for the CPU rounds');
  const sandbox = await startSandbox(children, 'sandbox (defer, CPU)', 0, {
    extraUsers: 1,
    accountsPerUser: warm.accounts,
    transactionsPerAccount: warm.transactionsPerAccount,
    cardsPerUser: warm.cards,
  });
  const bankgraph = await startBankgraph(children, sandbox);
  const agent = new Agent({ keepAlive: true, maxSockets: defer.connections });
  try {
    const session = await gatewaySession(bankgraph.info.url, USER.username, USER.password);
    const get = executedPost(bankgraph.info.url, session, { first }, agent);
    const reference = await get(VIEWER_GRAPH, 'application/json');
    const parsed = JSON.parse(reference.text) as { data?: ViewerGraphData; errors?: unknown[] };
    if (reference.status !== 200 || parsed.errors || !parsed.data)
      throw new Error(`defer: POST without @defer answered HTTP ${reference.status}: ${reference.text.slice(0, 300)}`);
    expectShape(parsed.data, warm.accounts, warm.cards, first, 'defer, POST without @defer');
    const plainData: unknown = parsed.data;
    const sends: Record<Kind, () => Promise<void>> = {
      plain: async () => {
        const answer = await get(VIEWER_GRAPH, 'application/json');
        if (answer.status !== 200 || answer.text !== reference.text)
          throw new Error(`defer: POST without @defer answered otherwise: ${answer.text.slice(0, 300)}`);
      },
      deferred: async () => {
        const answer = await get(VIEWER_GRAPH_DEFERRED, DEFER_ACCEPT);
        const merged = mergePayloads(payloadsOfBody(answer.status, answer.contentType, answer.text), 'defer, POST with @defer');
        if (!isDeepStrictEqual(merged, plainData)) throw new Error('defer: the deferred payloads merged are not the answer without @defer');
      },
    };
    const measure = async (kind: Kind, durationS: number): Promise<Measured> => {
      ctx.progress(`defer: ${kind === 'plain' ? 'without' : 'with'} @defer, ${defer.connections} clients, ${durationS} s`);
      const cpuBefore = bankgraph.cpuMs();
      const queries = await closedLoop(sends[kind], defer.connections, durationS);
      return { queries, cpuUsPerQuery: ((bankgraph.cpuMs() - cpuBefore) * 1000) / queries };
    };
    await measure('plain', defer.warmupS);
    await measure('deferred', defer.warmupS);
    const rounds: { plain: Measured; deferred: Measured }[] = [];
    for (let round = 0; round < defer.rounds; round++) {
      const order: Kind[] = round % 2 === 0 ? ['plain', 'deferred'] : ['deferred', 'plain'];
      const measured: Partial<Record<Kind, Measured>> = {};
      for (const kind of order) measured[kind] = await measure(kind, defer.durationS);
      rounds.push({ plain: measured.plain!, deferred: measured.deferred! });
    }
    return rounds;
  } finally {
    agent.destroy();
    await children.close(bankgraph, sandbox);
  }
}

/** `clients` loops, each sending its next query when its last answer arrived, for `durationS`. */
async function closedLoop(send: () => Promise<void>, clients: number, durationS: number): Promise<number> {
  const until = performance.now() + durationS * 1000;
  let queries = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        await send();
        queries += 1;
      }
    }),
  );
  return queries;
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

function executedPost(
  gatewayUrl: string,
  session: string,
  variables: Record<string, unknown>,
  agent: Agent,
): (query: string, accept: string) => Promise<Answer> {
  const url = new URL('/graphql', gatewayUrl);
  const bodies = new Map<string, string>();
  return (query, accept) => {
    let body = bodies.get(query);
    if (body === undefined) {
      body = JSON.stringify({ query, variables });
      bodies.set(query, body);
    }
    const headers = { authorization: `Bearer ${session}`, 'content-type': 'application/json', 'cache-control': 'no-cache', accept };
    return new Promise<Answer>((resolve, reject) => {
      const req = request(url, { method: 'POST', headers, agent, timeout: 30_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'] ?? '', text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`POST ${url.pathname} gave no answer within 30 s`)));
      req.on('error', reject);
      req.end(body);
    });
  };
}

function coldRows(ctx: BenchContext, runs: ColdRuns): Row[] {
  const { warm, cold, first } = ctx.settings;
  const latency = cold.latencyMs;
  const scenario = `10. @defer: the cold nested query with every account's and card's balance and transactions deferred, beside it without @defer (${warm.accounts} accounts, ${warm.cards} cards, first: ${first}; provider latency ${latency} ms; Cache-Control: no-cache; median of ${runs.plainMs.length} of each, alternating)`;
  const trips = (ms: number): string => `${fmt(ms)} ms (${fmt(ms / latency, 2)})`;
  const plain = median(runs.plainMs);
  const firstMs = median(runs.firstMs);
  const lastMs = median(runs.lastMs);
  const expectedCalls = 2 + 2 * warm.accounts + 2 * warm.cards;
  const calls = (shapes: readonly CallShape[]): string => {
    const tokens = Math.max(...shapes.map((shape) => shape.tokenCalls));
    return `${range(shapes.map((shape) => shape.dataCalls))}${tokens > 0 ? ` + ${tokens} token` : ''}`;
  };
  const allCalls = [...runs.shapes.plain, ...runs.shapes.deferred].every(
    (shape) => shape.dataCalls === expectedCalls && shape.calls === shape.dataCalls + shape.tokenCalls,
  );
  return [
    { scenario, metric: `without @defer: wall time (ms; round trips = ÷ ${latency} ms)`, bankgraph: trips(plain) },
    {
      scenario,
      metric: 'with @defer: time to the first payload (ms; round trips)',
      bankgraph: trips(firstMs),
      target: `≤ ${MAX_FIRST_ROUND_TRIPS} round trips`,
      verdict: verdict(firstMs / latency <= MAX_FIRST_ROUND_TRIPS),
    },
    {
      scenario,
      metric: 'with @defer: time to the last payload (ms; round trips)',
      bankgraph: trips(lastMs),
      target: `≤ ${MAX_LAST_RATIO}× without @defer (${fmt(plain * MAX_LAST_RATIO)} ms)`,
      verdict: verdict(lastMs <= plain * MAX_LAST_RATIO),
    },
    {
      scenario,
      metric: 'payloads per deferred answer; provider data calls per query with / without @defer',
      bankgraph: `${range(runs.payloads)}; ${calls(runs.shapes.deferred)} / ${calls(runs.shapes.plain)}`,
      target: `nothing cached: 2 + 2A + 2C = ${expectedCalls} calls each`,
      verdict: verdict(allCalls),
    },
  ];
}

function cpuRows(ctx: BenchContext, rounds: readonly { plain: Measured; deferred: Measured }[]): Row[] {
  const { warm, defer, first } = ctx.settings;
  const scenario = `10. @defer: CPU per executed query with and without @defer (${warm.accounts} accounts, ${warm.cards} cards, first: ${first}; POST with Cache-Control: no-cache, every provider call made; provider latency 0; ${defer.connections} clients; ${rounds.length} round${rounds.length === 1 ? '' : 's'} of ${defer.durationS} s each, alternating)`;
  const ratios = rounds.map((round) => round.deferred.cpuUsPerQuery / round.plain.cpuUsPerQuery);
  const spread = (values: number[], format: (value: number) => string): string =>
    values.length === 1 ? format(values[0]!) : `${format(median(values))} (${format(Math.min(...values))}-${format(Math.max(...values))})`;
  const of = (kind: Kind, value: (m: Measured) => number): number[] => rounds.map((round) => value(round[kind]));
  return [
    {
      scenario,
      metric: 'process CPU per query (µs), with / without @defer, median (range) of the rounds',
      bankgraph: `${spread(
        of('deferred', (m) => m.cpuUsPerQuery),
        fmt,
      )} / ${spread(
        of('plain', (m) => m.cpuUsPerQuery),
        fmt,
      )}`,
    },
    {
      scenario,
      metric: 'queries answered, with / without @defer, median of the rounds',
      bankgraph: `${fmt(median(of('deferred', (m) => m.queries)))} / ${fmt(median(of('plain', (m) => m.queries)))}`,
    },
    {
      scenario,
      metric: 'with ÷ without @defer CPU per query, median (range) of the rounds',
      bankgraph: spread(ratios, (value) => `${fmt(value, 2)}×`),
      target: `≤ ${MAX_CPU_RATIO}×`,
      verdict: verdict(median(ratios) <= MAX_CPU_RATIO),
    },
  ];
}

function range(values: readonly number[]): string {
  const low = Math.min(...values);
  const high = Math.max(...values);
  return low === high ? fmt(low) : `${fmt(low)}–${fmt(high)}`;
}
