import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { BenchContext } from './lib/context';
import { parseSettings } from './lib/settings';
import { Children } from './lib/stacks';
import { renderTable } from './lib/table';
import { runCold, runScale } from './scenarios/cold';
import { runDefer } from './scenarios/defer';
import { runExecution } from './scenarios/execution';
import { runExecutionOverWebSocket } from './scenarios/execution-ws';
import { runFanOut } from './scenarios/fan-out';
import { runSubscriptions } from './scenarios/subscriptions';
import { runSubscriptions2x } from './scenarios/subscriptions-2x';
import { runTracing } from './scenarios/tracing';
import { runWarmAndSoak } from './scenarios/warm';

/**
 * `npm run bench [-- --quick] [-- --only=warm,cold,...] [-- --fast-paths=off]`: every scenario against servers this process forks
 * (sandbox, bankgraph, the naive gateway, the node:http ceiling), load generated here, one markdown table on
 * stdout. Progress goes to stderr. Exits non-zero when the harness itself fails (a server that does not start, a
 * wrong answer under load); a missed target is reported in the table, not as a failure.
 */
async function main(): Promise<void> {
  const settings = parseSettings(process.argv.slice(2));
  const started = performance.now();
  const loadAtStart = loadavg()[0]!;
  const children = new Children();
  const ctx: BenchContext = {
    settings,
    children,
    rows: [],
    progress: (message) => process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1)} s] ${message}\n`),
  };
  const interrupted = (): void => {
    void children.closeAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);

  try {
    await runWarmAndSoak(ctx);
    await runCold(ctx);
    await runScale(ctx);
    await runSubscriptions(ctx);
    await runSubscriptions2x(ctx);
    await runTracing(ctx);
    await runExecution(ctx);
    await runExecutionOverWebSocket(ctx);
    await runFanOut(ctx);
    await runDefer(ctx);
  } finally {
    await children.closeAll();
  }

  // Scenarios share servers (the soak reuses the warm stack), so rows are put back in the order.
  const rows = [...ctx.rows].sort((a, b) => scenarioNumber(a.scenario) - scenarioNumber(b.scenario));
  const cpu = cpus();
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(
    `bankgraph bench, ${settings.quick ? 'quick (smoke) run: figures are not meaningful' : 'full run'}; ${new Date().toISOString()}; ` +
      `Node ${process.version}; ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}; load average at start ${loadAtStart.toFixed(2)}; ${seconds.toFixed(0)} s\n\n` +
      `${renderTable(rows)}\n`,
  );
}

function scenarioNumber(scenario: string): number {
  return Number(/^(\d+)\./.exec(scenario)?.[1] ?? 99);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
