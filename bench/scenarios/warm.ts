import { expectShape, sameDataModuloDecimals } from '../lib/answers';
import type { ChildServer } from '../lib/child-server';
import type { BenchContext } from '../lib/context';
import { waitUntilIdle } from '../lib/idle';
import { expectData, postGraphQL } from '../lib/http';
import { assertClean, runLoad, type LoadResult } from '../lib/load';
import { viewerGraphBody, type ViewerGraphData } from '../lib/queries';
import { wants } from '../lib/settings';
import { gatewaySession, providerAccessToken } from '../lib/sign-in';
import { startBankgraph, startCeiling, startNaive, startSandbox } from '../lib/stacks';
import { fmt, verdict } from '../lib/table';
import { runSoak } from './soak';

const USER = { username: 'user1', password: 'doe' };

/**
 * Scenario 1 (and the stack scenario 5 reuses): the warm nested query under concurrent load against bankgraph, the
 * naive gateway and the node:http ceiling, one at a time, each in its own process, on one sandbox without latency.
 */
export async function runWarmAndSoak(ctx: BenchContext): Promise<void> {
  const { settings, children } = ctx;
  const { warm } = settings;
  const runWarm = wants(settings, 'warm');
  const runSoakToo = wants(settings, 'soak');
  if (!runWarm && !runSoakToo) return;

  ctx.progress('warm: starting the sandbox, bankgraph and the naive gateway');
  const sandbox = await startSandbox(children, 'sandbox (warm)', 0, {
    extraUsers: 1,
    accountsPerUser: warm.accounts,
    transactionsPerAccount: warm.transactionsPerAccount,
    cardsPerUser: warm.cards,
  });
  const [bankgraph, naive] = await Promise.all([startBankgraph(children, sandbox), startNaive(children, sandbox)]);
  let ceiling: ChildServer<{ url: string }> | undefined;
  try {
    const session = await gatewaySession(bankgraph.info.url, USER.username, USER.password);
    const providerToken = await providerAccessToken(sandbox.info.provider, USER.username, USER.password);
    const body = viewerGraphBody(settings.first);
    const bankgraphHeaders = { authorization: `Bearer ${session}` };
    const naiveHeaders = { authorization: `Bearer ${providerToken}` };

    // The first answer fills bankgraph's cache; the second is served from it and is the reference bytes.
    await postGraphQL(`${bankgraph.info.url}/graphql`, body, bankgraphHeaders);
    const reference = await postGraphQL<ViewerGraphData>(`${bankgraph.info.url}/graphql`, body, bankgraphHeaders);
    expectShape(expectData(reference, 'bankgraph, warm'), warm.accounts, warm.cards, settings.first, 'bankgraph, warm');
    const naiveAnswer = await postGraphQL<ViewerGraphData>(`${naive.info.url}/graphql`, body, naiveHeaders);
    expectData(naiveAnswer, 'naive gateway');
    if (!sameDataModuloDecimals(reference.text, naiveAnswer.text))
      throw new Error('the naive gateway and bankgraph answered the warm query with different data');

    if (runWarm) {
      ceiling = await startCeiling(children, { body: reference.text, contentType: reference.contentType });
      const targets = [
        { name: 'bankgraph', url: `${bankgraph.info.url}/graphql`, headers: bankgraphHeaders, expect: reference.text },
        { name: 'naive gateway', url: `${naive.info.url}/graphql`, headers: naiveHeaders, expect: naiveAnswer.text },
        { name: 'node:http ceiling', url: `${ceiling.info.url}/graphql`, headers: bankgraphHeaders, expect: reference.text },
      ];
      const results: LoadResult[] = [];
      for (const target of targets) {
        ctx.progress(`warm: ${target.name}, ${warm.connections} connections, ${warm.warmupS} s warm-up + ${warm.durationS} s`);
        const common = { url: target.url, body, headers: target.headers, connections: warm.connections, expectBody: target.expect };
        assertClean(await runLoad({ ...common, durationS: warm.warmupS, maxDurationS: warm.warmupS + 10 }), `${target.name} warm-up`);
        await waitUntilIdle([bankgraph, naive, sandbox, ceiling]);
        const result = await runLoad({ ...common, durationS: warm.durationS, maxDurationS: warm.durationS + 20 });
        assertClean(result, target.name);
        await waitUntilIdle([bankgraph, naive, sandbox, ceiling]);
        results.push(result);
      }
      await children.close(ceiling);
      ceiling = undefined;
      addWarmRows(ctx, results as [LoadResult, LoadResult, LoadResult]);
    }

    if (runSoakToo) await runSoak(ctx, bankgraph, body, bankgraphHeaders, reference.text);
  } finally {
    await children.close(...[bankgraph, naive, sandbox, ...(ceiling ? [ceiling] : [])]);
  }
}

function addWarmRows(ctx: BenchContext, [bankgraph, naive, ceiling]: [LoadResult, LoadResult, LoadResult]): void {
  const { warm, first } = ctx.settings;
  const scenario = `1. Warm nested query (${warm.accounts} accounts, ${warm.cards} cards, first: ${first}; cache warm; ${warm.connections} connections, ${warm.durationS} s)`;
  const vsNaive = bankgraph.requestsPerSecond / naive.requestsPerSecond;
  const vsCeiling = bankgraph.requestsPerSecond / ceiling.requestsPerSecond;
  ctx.rows.push(
    {
      scenario,
      metric: 'throughput (req/s)',
      bankgraph: fmt(bankgraph.requestsPerSecond),
      naive: fmt(naive.requestsPerSecond),
      ceiling: fmt(ceiling.requestsPerSecond),
    },
    { scenario, metric: 'latency p50 / p99 (ms)', bankgraph: latency(bankgraph), naive: latency(naive), ceiling: latency(ceiling) },
    { scenario, metric: 'bankgraph ÷ naive throughput', bankgraph: `${fmt(vsNaive, 1)}×`, target: '≥ 5×', verdict: verdict(vsNaive >= 5) },
    { scenario, metric: 'bankgraph ÷ ceiling throughput', bankgraph: `${fmt(vsCeiling * 100)} %`, target: '≥ 25 %', verdict: verdict(vsCeiling >= 0.25) },
  );
}

function latency(result: LoadResult): string {
  return `${fmt(result.p50Ms, 1)} / ${fmt(result.p99Ms, 1)}`;
}
