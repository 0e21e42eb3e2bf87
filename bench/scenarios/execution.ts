import type { ChildServer } from '../lib/child-server';
import type { BenchContext } from '../lib/context';
import { waitUntilIdle } from '../lib/idle';
import { expectShape, sameDataModuloDecimals } from '../lib/answers';
import { expectData, postGraphQL } from '../lib/http';
import { assertClean, runLoad, type LoadResult } from '../lib/load';
import { viewerGraphBody, type ViewerGraphData } from '../lib/queries';
import { wants } from '../lib/settings';
import { gatewaySession, providerAccessToken } from '../lib/sign-in';
import { startBankgraph, startFloor, startNaive, startSandbox } from '../lib/stacks';
import { fmt, median, verdict } from '../lib/table';

const USER = { username: 'user1', password: 'doe' };

/** A gateway under load, and the answer every response must be. */
interface Target {
  name: string;
  gateway: ChildServer<unknown>;
  url: string;
  headers: Record<string, string>;
  expect: string;
}

interface Measured {
  load: LoadResult;
  /** Gateway process CPU (user + system) over the measured run, per answered query. */
  cpuUsPerQuery: number;
}

/**
 * Scenario 7: what executing the nested query costs, with nothing kept. bankgraph is asked with
 * `Cache-Control: no-cache`, so every query is executed with all 16 provider calls, against a sandbox without
 * latency; the naive gateway executes every query anyway. The floor (bench/servers/floor.server.ts) makes the same
 * calls and parses their answers without any GraphQL, so the distance from it is what a GraphQL layer costs.
 * Closed-loop load on each in turn, in alternating rounds; the figure that matters is the gateway process's own CPU
 * time per query (from /proc, so the sandbox's and the load generator's are not in it).
 */
export async function runExecution(ctx: BenchContext): Promise<void> {
  const { settings, children } = ctx;
  if (!wants(settings, 'execution')) return;
  const { warm, execution } = settings;
  ctx.progress('execution: starting the sandbox, bankgraph and the naive gateway');
  const sandbox = await startSandbox(children, 'sandbox (execution)', 0, {
    extraUsers: 1,
    accountsPerUser: warm.accounts,
    transactionsPerAccount: warm.transactionsPerAccount,
    cardsPerUser: warm.cards,
  });
  const [bankgraph, naive] = await Promise.all([startBankgraph(children, sandbox), startNaive(children, sandbox)]);
  let floor: ChildServer<{ url: string }> | undefined;
  try {
    const session = await gatewaySession(bankgraph.info.url, USER.username, USER.password);
    const providerToken = await providerAccessToken(sandbox.info.provider, USER.username, USER.password);
    const body = viewerGraphBody(settings.first);
    const bankgraphHeaders = { authorization: `Bearer ${session}`, 'cache-control': 'no-cache' };
    const naiveHeaders = { authorization: `Bearer ${providerToken}` };
    const reference = await postGraphQL<ViewerGraphData>(`${bankgraph.info.url}/graphql`, body, bankgraphHeaders);
    expectShape(expectData(reference, 'bankgraph, executed'), warm.accounts, warm.cards, settings.first, 'bankgraph, executed');
    const naiveAnswer = await postGraphQL<ViewerGraphData>(`${naive.info.url}/graphql`, body, naiveHeaders);
    expectData(naiveAnswer, 'naive gateway');
    if (!sameDataModuloDecimals(reference.text, naiveAnswer.text))
      throw new Error('the naive gateway and bankgraph answered the executed query with different data');

    const ourLoad: Target = {
      name: 'bankgraph (no-cache)',
      gateway: bankgraph,
      url: `${bankgraph.info.url}/graphql`,
      headers: bankgraphHeaders,
      expect: reference.text,
    };
    const theirLoad: Target = { name: 'naive gateway', gateway: naive, url: `${naive.info.url}/graphql`, headers: naiveHeaders, expect: naiveAnswer.text };
    floor = await startFloor(children, {
      dataUrl: sandbox.info.provider.dataUrl,
      accessToken: providerToken,
      body: reference.text,
      contentType: reference.contentType,
    });
    const floorLoad: Target = { name: 'floor', gateway: floor, url: `${floor.info.url}/graphql`, headers: naiveHeaders, expect: reference.text };
    const everyServer = [bankgraph, naive, sandbox, floor];
    const common = (load: Target) => ({ url: load.url, body, headers: load.headers, connections: execution.connections, expectBody: load.expect });
    for (const load of [ourLoad, theirLoad, floorLoad]) {
      ctx.progress(`execution: ${load.name}, ${execution.warmupS} s warm-up`);
      assertClean(await runLoad({ ...common(load), durationS: execution.warmupS, maxDurationS: execution.warmupS + 10 }), `${load.name} warm-up`);
      await waitUntilIdle(everyServer);
    }
    const measure = async (load: Target): Promise<Measured> => {
      ctx.progress(`execution: ${load.name}, ${execution.connections} connections, ${execution.durationS} s`);
      const cpuBefore = load.gateway.cpuMs();
      const result = await runLoad({ ...common(load), durationS: execution.durationS, maxDurationS: execution.durationS + 20 });
      const cpuMs = load.gateway.cpuMs() - cpuBefore;
      assertClean(result, load.name);
      await waitUntilIdle(everyServer);
      return { load: result, cpuUsPerQuery: (cpuMs * 1000) / result.requests };
    };
    // Rounds of one window each, in alternating order: a VM's speed drifts within a minute, and one window each,
    // always in the same order, would let that drift decide the ratio. bankgraph's window is always the middle one,
    // next to both of the windows it is compared with.
    const rounds: Round[] = [];
    for (let round = 0; round < execution.rounds; round++) {
      const [first, last] = round % 2 === 0 ? [theirLoad, floorLoad] : [floorLoad, theirLoad];
      const before = await measure(first);
      const ours = await measure(ourLoad);
      const after = await measure(last);
      rounds.push(first === theirLoad ? { ours, theirs: before, floor: after } : { ours, theirs: after, floor: before });
    }
    addRows(ctx, rounds);
  } finally {
    await children.close(bankgraph, naive, sandbox, ...(floor ? [floor] : []));
  }
}

interface Round {
  ours: Measured;
  theirs: Measured;
  floor: Measured;
}

function addRows(ctx: BenchContext, rounds: readonly Round[]): void {
  const { warm, execution, first } = ctx.settings;
  const scenario = `7. Execution: nested query executed every time (${warm.accounts} accounts, ${warm.cards} cards, first: ${first}; bankgraph with Cache-Control: no-cache; provider latency 0; ${execution.connections} connections; ${rounds.length} round${rounds.length === 1 ? '' : 's'} of ${execution.durationS} s each, alternating; the ceiling column is the floor: the same provider calls and JSON.parse, no GraphQL)`;
  const ratios = rounds.map((round) => round.ours.cpuUsPerQuery / round.theirs.cpuUsPerQuery);
  const ratio = median(ratios);
  /** The median over the rounds, and the range when there were several. */
  const spread = (values: number[], format: (value: number) => string): string =>
    values.length === 1 ? format(values[0]!) : `${format(median(values))} (${format(Math.min(...values))}-${format(Math.max(...values))})`;
  const of = (side: keyof Round, value: (m: Measured) => number): number[] => rounds.map((round) => value(round[side]));
  const throughput = (side: keyof Round): string => fmt(median(of(side, (m) => m.load.requestsPerSecond)));
  const latency = (side: keyof Round): string => `${fmt(median(of(side, (m) => m.load.p50Ms)), 1)} / ${fmt(median(of(side, (m) => m.load.p99Ms)), 1)}`;
  const cpu = (side: keyof Round): string =>
    spread(
      of(side, (m) => m.cpuUsPerQuery),
      fmt,
    );
  /** A gateway's CPU per query as a multiple of the floor's in the same round. */
  const timesFloor = (side: 'ours' | 'theirs'): string =>
    spread(
      rounds.map((round) => round[side].cpuUsPerQuery / round.floor.cpuUsPerQuery),
      (value) => `${fmt(value, 1)}×`,
    );
  ctx.rows.push(
    { scenario, metric: 'throughput (req/s), median of the rounds', bankgraph: throughput('ours'), naive: throughput('theirs'), ceiling: throughput('floor') },
    { scenario, metric: 'latency p50 / p99 (ms), medians of the rounds', bankgraph: latency('ours'), naive: latency('theirs'), ceiling: latency('floor') },
    { scenario, metric: 'process CPU per query (µs), median (range) of the rounds', bankgraph: cpu('ours'), naive: cpu('theirs'), ceiling: cpu('floor') },
    { scenario, metric: "CPU per query ÷ the floor's, median (range) of the rounds", bankgraph: timesFloor('ours'), naive: timesFloor('theirs') },
    {
      scenario,
      metric: 'bankgraph ÷ naive CPU per query, median (range) of the rounds',
      bankgraph: spread(ratios, (value) => `${fmt(value * 100)} %`),
      target: '≤ 25 %',
      verdict: verdict(ratio <= 0.25),
    },
  );
}
