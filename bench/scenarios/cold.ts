import { performance } from 'node:perf_hooks';
import { expectShape } from '../lib/answers';
import type { ChildServer } from '../lib/child-server';
import type { BenchContext } from '../lib/context';
import { expectData, postGraphQL } from '../lib/http';
import { callShape, clearProviderLog, readProviderLog, type CallShape } from '../lib/provider-log';
import { viewerGraphBody, type ViewerGraphData } from '../lib/queries';
import { wants } from '../lib/settings';
import { gatewaySession, providerAccessToken } from '../lib/sign-in';
import { startBankgraph, startNaive, startSandbox } from '../lib/stacks';
import { fmt, mb, median, verdict, type Row } from '../lib/table';
import type { SandboxInfo } from '../servers/sandbox.server';

const USER = { username: 'user1', password: 'doe' };
/** The issue's bound on the cold query: it costs at most this many provider latencies of wall time. */
const MAX_ROUND_TRIPS = 3;

interface ColdRuns {
  wallMs: number[];
  shapes: CallShape[];
}

interface Sizes {
  accounts: number;
  cards: number;
  transactionsPerAccount: number;
}

/** Scenario 2: the nested query with nothing cached, against a provider that takes 50 ms per call (or --latency=). */
export async function runCold(ctx: BenchContext): Promise<void> {
  if (!wants(ctx.settings, 'cold')) return;
  const { warm, cold } = ctx.settings;
  const sizes = { accounts: warm.accounts, cards: warm.cards, transactionsPerAccount: warm.transactionsPerAccount };
  const result = await coldPair(ctx, 'cold', sizes, cold.runs);
  const scenario = `2. Cold nested query (${sizes.accounts} accounts, ${sizes.cards} cards; provider latency ${cold.latencyMs} ms; bankgraph with Cache-Control: no-cache; median of ${cold.runs})`;
  ctx.rows.push(...coldRows(ctx, scenario, sizes, result.bankgraph, result.naive, 'wall time'));
}

/** Scenario 3: the same cold query for a user with 50 accounts of 500 transactions; peak RSS of each gateway. */
export async function runScale(ctx: BenchContext): Promise<void> {
  if (!wants(ctx.settings, 'scale')) return;
  const { scale, cold } = ctx.settings;
  const result = await coldPair(ctx, 'scale', scale, scale.runs);
  const scenario = `3. Scale: cold query, ${scale.accounts} accounts × ${scale.transactionsPerAccount} transactions, ${scale.cards} cards (provider latency ${cold.latencyMs} ms; median of ${scale.runs})`;
  const wallRatio = median(result.bankgraph.wallMs) / median(result.naive.wallMs);
  ctx.rows.push(
    ...coldRows(ctx, scenario, scale, result.bankgraph, result.naive, 'critical path'),
    // The targets for this query.
    {
      scenario,
      metric: 'wall time, bankgraph ÷ naive',
      bankgraph: `${fmt(wallRatio, 2)}×`,
      target: `≤ ${SCALE_MAX_WALL_RATIO}×`,
      verdict: verdict(wallRatio <= SCALE_MAX_WALL_RATIO),
    },
    {
      scenario,
      metric: 'peak RSS of the gateway process (VmHWM)',
      bankgraph: mb(result.peakRss.bankgraph),
      naive: mb(result.peakRss.naive),
      target: '≤ naive',
      verdict: verdict(result.peakRss.bankgraph <= result.peakRss.naive),
    },
  );
}

const SCALE_MAX_WALL_RATIO = 0.75;

async function coldPair(
  ctx: BenchContext,
  label: string,
  sizes: Sizes,
  runs: number,
): Promise<{ bankgraph: ColdRuns; naive: ColdRuns; peakRss: { bankgraph: number; naive: number } }> {
  const { children, settings } = ctx;
  ctx.progress(
    `${label}: starting a sandbox with ${sizes.accounts} accounts × ${sizes.transactionsPerAccount} transactions and ${settings.cold.latencyMs} ms latency`,
  );
  const sandbox = await startSandbox(children, `sandbox (${label})`, settings.cold.latencyMs, {
    extraUsers: 1,
    accountsPerUser: sizes.accounts,
    transactionsPerAccount: sizes.transactionsPerAccount,
    cardsPerUser: sizes.cards,
  });
  const [bankgraph, naive] = await Promise.all([startBankgraph(children, sandbox), startNaive(children, sandbox)]);
  try {
    const session = await gatewaySession(bankgraph.info.url, USER.username, USER.password);
    const providerToken = await providerAccessToken(sandbox.info.provider, USER.username, USER.password);
    const body = viewerGraphBody(settings.first);
    ctx.progress(`${label}: bankgraph, ${runs} cold queries`);
    const bankgraphRuns = await measureCold(
      ctx,
      sandbox,
      `${bankgraph.info.url}/graphql`,
      body,
      { authorization: `Bearer ${session}`, 'cache-control': 'no-cache' },
      runs,
      sizes,
      'bankgraph',
    );
    ctx.progress(`${label}: naive gateway, ${runs} cold queries`);
    const naiveRuns = await measureCold(
      ctx,
      sandbox,
      `${naive.info.url}/graphql`,
      body,
      { authorization: `Bearer ${providerToken}` },
      runs,
      sizes,
      'naive gateway',
    );
    return { bankgraph: bankgraphRuns, naive: naiveRuns, peakRss: { bankgraph: bankgraph.peakRssBytes(), naive: naive.peakRssBytes() } };
  } finally {
    await children.close(bankgraph, naive, sandbox);
  }
}

async function measureCold(
  ctx: BenchContext,
  sandbox: ChildServer<SandboxInfo>,
  url: string,
  body: string,
  headers: Record<string, string>,
  runs: number,
  sizes: Sizes,
  what: string,
): Promise<ColdRuns> {
  // One unmeasured query first: a gateway that has been up a while has its code compiled and its sockets open.
  expectData(await postGraphQL(url, body, headers), `${what}, first cold query`);
  const wallMs: number[] = [];
  const shapes: CallShape[] = [];
  for (let run = 0; run < runs; run++) {
    await clearProviderLog(sandbox.info.url);
    const started = performance.now();
    const answer = await postGraphQL<ViewerGraphData>(url, body, headers);
    wallMs.push(performance.now() - started);
    expectShape(expectData(answer, `${what}, cold query`), sizes.accounts, sizes.cards, ctx.settings.first, what);
    shapes.push(callShape(await readProviderLog(sandbox.info.url)));
  }
  return { wallMs, shapes };
}

/**
 * `roundTripTarget` says where the ≤ 3 sequential round trips target is checked: on wall time for the cold query;
 * for the scale query, whose wall time is mostly moving and parsing 25,000 transactions (the naive gateway takes as
 * long), on the calls in sequence in the provider log.
 */
function coldRows(
  ctx: BenchContext,
  scenario: string,
  sizes: Sizes,
  bankgraph: ColdRuns,
  naive: ColdRuns,
  roundTripTarget: 'wall time' | 'critical path',
): Row[] {
  const latency = ctx.settings.cold.latencyMs;
  const expectedCalls = 2 + 2 * sizes.accounts + 2 * sizes.cards;
  const roundTrips = (runs: ColdRuns): number => median(runs.wallMs) / latency;
  const callsMet = bankgraph.shapes.every((shape) => shape.dataCalls === expectedCalls && shape.calls === shape.dataCalls + shape.tokenCalls);
  return [
    { scenario, metric: 'wall time (ms)', bankgraph: fmt(median(bankgraph.wallMs)), naive: fmt(median(naive.wallMs)) },
    {
      scenario,
      metric: `sequential round trips (wall time ÷ ${latency} ms)`,
      bankgraph: fmt(roundTrips(bankgraph), 2),
      naive: fmt(roundTrips(naive), 2),
      ...(roundTripTarget === 'wall time' ? { target: `≤ ${MAX_ROUND_TRIPS}`, verdict: verdict(roundTrips(bankgraph) <= MAX_ROUND_TRIPS) } : {}),
    },
    {
      scenario,
      metric: 'provider calls per query',
      bankgraph: describeCalls(bankgraph.shapes),
      naive: describeCalls(naive.shapes),
      target: `exactly 2 + 2A + 2C = ${expectedCalls}`,
      verdict: verdict(callsMet),
    },
    {
      scenario,
      metric: 'provider log: most calls in flight / critical path (calls in sequence)',
      bankgraph: describeOverlap(bankgraph.shapes),
      naive: describeOverlap(naive.shapes),
      ...(roundTripTarget === 'critical path'
        ? {
            target: `≤ ${MAX_ROUND_TRIPS} in sequence`,
            verdict: verdict(bankgraph.shapes.every((shape) => shape.criticalPath <= MAX_ROUND_TRIPS)),
          }
        : {}),
    },
  ];
}

/** Data calls, with the range when runs differed and token grants named apart (the target excludes them). */
function describeCalls(shapes: readonly CallShape[]): string {
  const text = range(shapes.map((shape) => shape.dataCalls));
  const tokens = Math.max(...shapes.map((shape) => shape.tokenCalls));
  const other = Math.max(...shapes.map((shape) => shape.calls - shape.dataCalls - shape.tokenCalls));
  return `${text}${tokens > 0 ? ` + ${tokens} token` : ''}${other > 0 ? ` + ${other} other` : ''}`;
}

function describeOverlap(shapes: readonly CallShape[]): string {
  return `${range(shapes.map((shape) => shape.maxOverlap))} / ${range(shapes.map((shape) => shape.criticalPath))}`;
}

function range(values: readonly number[]): string {
  const low = Math.min(...values);
  const high = Math.max(...values);
  return low === high ? fmt(low) : `${fmt(low)}–${fmt(high)}`;
}
