import type { ChildServer } from '../lib/child-server';
import type { BenchContext } from '../lib/context';
import type { MemorySample } from '../lib/ipc.types';
import { assertClean, runLoad } from '../lib/load';
import { fmt, mb, verdict } from '../lib/table';
import type { GatewayInfo } from '../servers/gateway.server';

/**
 * Growth that counts as a leak: more than this fraction of the start, and more than the absolute floor (a few MB
 * of RSS move with allocator and JIT behaviour alone on a 100 MB process, whatever the code does).
 */
const GROWTH_FRACTION = 0.05;
const RSS_FLOOR_BYTES = 8 * 1024 * 1024;
const HEAP_FLOOR_BYTES = 2 * 1024 * 1024;
const WARM_UP_BATCHES = 3;

/**
 * Scenario 5: the warm query over and over against the same bankgraph process, its memory sampled inside the
 * process after a full GC before the first batch and after each one.
 */
export async function runSoak(
  ctx: BenchContext,
  bankgraph: ChildServer<GatewayInfo>,
  body: string,
  headers: Record<string, string>,
  expectBody: string,
): Promise<void> {
  const { soak } = ctx.settings;
  const url = `${bankgraph.info.url}/graphql`;
  const perBatch = Math.ceil(soak.queries / soak.batches);
  // Batches first, unmeasured, settle JIT, pools, caches and the allocator at this load, so the start sample is of
  // a process in its steady state: at thousands of queries a second a fixed couple of thousand was over in a
  // fraction of a second, and the first measured batch then showed the allocator growing into the load as "growth".
  // One batch is not always enough for V8's young generation, which grows in steps (to 32 MB) as objects survive
  // its collections, and whose pages, empty after a GC, stay in RSS: a step in a measured batch would read as
  // "growth". Warm-up goes on, up to WARM_UP_BATCHES, until it stays put for a batch.
  let settled = await bankgraph.memory(true);
  let warmUps = 0;
  for (let warmUp = 1; warmUp <= WARM_UP_BATCHES; warmUp++) {
    warmUps = warmUp;
    ctx.progress(`soak: warm-up batch ${warmUp}, ${perBatch} queries`);
    assertClean(await runLoad({ url, body, headers, connections: soak.connections, amount: perBatch, maxDurationS: 30, expectBody }), 'soak warm-up');
    const after = await bankgraph.memory(true);
    const steady = after.youngGenerationBytes === settled.youngGenerationBytes;
    settled = after;
    if (steady) break;
  }

  const samples: MemorySample[] = [settled];
  const deadline = Date.now() + soak.maxDurationS * 1000;
  let queries = 0;
  let seconds = 0;
  let cutShort = false;
  for (let batch = 1; batch <= soak.batches && !cutShort; batch++) {
    const remainingS = (deadline - Date.now()) / 1000;
    if (remainingS <= 1) {
      cutShort = true;
      break;
    }
    ctx.progress(`soak: batch ${batch}/${soak.batches}, ${perBatch} queries`);
    const result = await runLoad({ url, body, headers, connections: soak.connections, amount: perBatch, maxDurationS: remainingS, expectBody });
    assertClean(result, `soak batch ${batch}`);
    queries += result.requests;
    seconds += result.durationS;
    cutShort = result.cutShort;
    samples.push(await bankgraph.memory(true));
  }

  const start = samples[0]!;
  const end = samples.at(-1)!;
  const rssGrowth = end.rssBytes - start.rssBytes;
  const heapGrowth = end.heapUsedBytes - start.heapUsedBytes;
  const rssOk = rssGrowth <= Math.max(RSS_FLOOR_BYTES, start.rssBytes * GROWTH_FRACTION);
  const heapOk = heapGrowth <= Math.max(HEAP_FLOOR_BYTES, start.heapUsedBytes * GROWTH_FRACTION);
  const scenario = `5. Soak: ${fmt(queries)} warm queries on one bankgraph process (${fmt(queries / seconds)} req/s), after ${warmUps} unmeasured batch${warmUps === 1 ? '' : 'es'}`;
  // Running out of time is reported as such, apart from the memory verdict: it says the gateway was too slow to
  // serve the full soak within the bench's time budget, not that it leaked.
  const shortfall = cutShort || queries < soak.queries ? `; only ${fmt(queries)} of ${fmt(soak.queries)} queries fit in ${soak.maxDurationS} s` : '';
  const trend = (pick: (sample: MemorySample) => number): string => samples.map((sample) => fmt(pick(sample) / (1024 * 1024), 1)).join(' → ');
  const gc = start.collected ? 'after GC' : 'without GC';
  ctx.rows.push(
    {
      scenario,
      // The young generation's pages are in RSS: a step there is V8 sizing it to the load, not memory kept.
      metric: `RSS ${gc}, start → end (every ${fmt(perBatch)}: ${trend((s) => s.rssBytes)} MB; of it V8's young generation: ${trend((s) => s.youngGenerationBytes)} MB)`,
      bankgraph: `${mb(start.rssBytes)} → ${mb(end.rssBytes)} (${signedMb(rssGrowth)})`,
      target: `no growth (≤ 5 % or ${mb(RSS_FLOOR_BYTES)})`,
      verdict: verdict(rssOk) + shortfall,
    },
    {
      scenario,
      metric: `JS heap used ${gc}, start → end (${trend((s) => s.heapUsedBytes)} MB)`,
      bankgraph: `${mb(start.heapUsedBytes)} → ${mb(end.heapUsedBytes)} (${signedMb(heapGrowth)})`,
      target: `no growth (≤ 5 % or ${mb(HEAP_FLOOR_BYTES)})`,
      verdict: verdict(heapOk) + shortfall,
    },
  );
}

function signedMb(bytes: number): string {
  return `${bytes >= 0 ? '+' : '−'}${mb(Math.abs(bytes))}`;
}
