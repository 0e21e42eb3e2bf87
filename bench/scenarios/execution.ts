import type { ChildServer } from '../lib/child-server';
import type { BenchContext } from '../lib/context';
import { expectShape, sameDataModuloDecimals } from '../lib/answers';
import { expectData, postGraphQL } from '../lib/http';
import { assertClean, runLoad, type LoadResult } from '../lib/load';
import { viewerGraphBody, type ViewerGraphData } from '../lib/queries';
import { wants } from '../lib/settings';
import { gatewaySession, providerAccessToken } from '../lib/sign-in';
import { startBankgraph, startNaive, startSandbox } from '../lib/stacks';
import { fmt, verdict } from '../lib/table';

const USER = { username: 'user1', password: 'doe' };

interface Measured {
  load: LoadResult;
  /** Gateway process CPU (user + system) over the measured run, per answered query. */
  cpuUsPerQuery: number;
}

/**
 * Scenario 7: what executing the nested query costs, with nothing kept. bankgraph is asked with
 * `Cache-Control: no-cache`, so every query is executed with all 16 provider calls, against a sandbox without
 * latency; the naive gateway executes every query anyway. Closed-loop load on each in turn; the figure that matters
 * is the gateway process's own CPU time per query (from /proc, so the sandbox's and the load generator's are not in it).
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

    const measure = async (name: string, gateway: ChildServer<unknown>, url: string, headers: Record<string, string>, expect: string): Promise<Measured> => {
      ctx.progress(`execution: ${name}, ${execution.connections} connections, ${execution.warmupS} s warm-up + ${execution.durationS} s`);
      const common = { url, body, headers, connections: execution.connections, expectBody: expect };
      assertClean(await runLoad({ ...common, durationS: execution.warmupS, maxDurationS: execution.warmupS + 10 }), `${name} warm-up`);
      const cpuBefore = gateway.cpuMs();
      const load = await runLoad({ ...common, durationS: execution.durationS, maxDurationS: execution.durationS + 20 });
      const cpuMs = gateway.cpuMs() - cpuBefore;
      assertClean(load, name);
      return { load, cpuUsPerQuery: (cpuMs * 1000) / load.requests };
    };
    const ours = await measure('bankgraph (no-cache)', bankgraph, `${bankgraph.info.url}/graphql`, bankgraphHeaders, reference.text);
    const theirs = await measure('naive gateway', naive, `${naive.info.url}/graphql`, naiveHeaders, naiveAnswer.text);
    addRows(ctx, ours, theirs);
  } finally {
    await children.close(bankgraph, naive, sandbox);
  }
}

function addRows(ctx: BenchContext, ours: Measured, theirs: Measured): void {
  const { warm, execution, first } = ctx.settings;
  const scenario = `7. Execution: nested query executed every time (${warm.accounts} accounts, ${warm.cards} cards, first: ${first}; bankgraph with Cache-Control: no-cache; provider latency 0; ${execution.connections} connections, ${execution.durationS} s)`;
  const ratio = ours.cpuUsPerQuery / theirs.cpuUsPerQuery;
  const latency = (m: Measured): string => `${fmt(m.load.p50Ms, 1)} / ${fmt(m.load.p99Ms, 1)}`;
  ctx.rows.push(
    { scenario, metric: 'throughput (req/s)', bankgraph: fmt(ours.load.requestsPerSecond), naive: fmt(theirs.load.requestsPerSecond) },
    { scenario, metric: 'latency p50 / p99 (ms)', bankgraph: latency(ours), naive: latency(theirs) },
    { scenario, metric: 'gateway process CPU per query (µs)', bankgraph: fmt(ours.cpuUsPerQuery), naive: fmt(theirs.cpuUsPerQuery) },
    { scenario, metric: 'bankgraph ÷ naive CPU per query', bankgraph: `${fmt(ratio * 100)} %`, target: '≤ 25 %', verdict: verdict(ratio <= 0.25) },
  );
}
