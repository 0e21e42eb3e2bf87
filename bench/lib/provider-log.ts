import { json } from './http';

/** An entry of the sandbox's GET /sandbox/requests (times in ms since the sandbox started). */
export interface LoggedCall {
  method: string;
  path: string;
  startedMs: number;
  endedMs?: number;
  status?: number;
}

export interface CallShape {
  /** Every provider call in the log. */
  calls: number;
  /** Calls to the data API (the ones 2 + 2A + 2C counts). */
  dataCalls: number;
  /** Token grants, counted apart: the target counts data calls "plus token calls". */
  tokenCalls: number;
  /** The most calls in flight at one moment. */
  maxOverlap: number;
  /**
   * The longest chain of calls where each starts only after the previous one ended: the sequential round trips
   * the provider saw, whatever the gateway's own overhead between them.
   */
  criticalPath: number;
}

export async function clearProviderLog(sandboxUrl: string): Promise<void> {
  await json('DELETE', `${sandboxUrl}/sandbox/requests`);
}

export async function readProviderLog(sandboxUrl: string): Promise<LoggedCall[]> {
  return (await json<{ requests: LoggedCall[] }>('GET', `${sandboxUrl}/sandbox/requests`)).requests;
}

export function callShape(log: readonly LoggedCall[]): CallShape {
  const calls = log.filter((call): call is LoggedCall & { endedMs: number } => call.endedMs !== undefined);
  if (calls.length !== log.length) throw new Error(`${log.length - calls.length} provider call(s) had not finished when the log was read`);

  // Ends sort before starts at the same instant: a call that starts as another ends did not overlap it.
  const events = calls.flatMap((call) => [
    { at: call.startedMs, delta: 1 },
    { at: call.endedMs, delta: -1 },
  ]);
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let inFlight = 0;
  let maxOverlap = 0;
  for (const event of events) {
    inFlight += event.delta;
    maxOverlap = Math.max(maxOverlap, inFlight);
  }

  const byStart = [...calls].sort((a, b) => a.startedMs - b.startedMs);
  const depth: number[] = [];
  byStart.forEach((call, i) => {
    let before = 0;
    for (let j = 0; j < i; j++) if (byStart[j]!.endedMs <= call.startedMs) before = Math.max(before, depth[j]!);
    depth.push(before + 1);
  });

  return {
    calls: calls.length,
    dataCalls: calls.filter((call) => call.path.startsWith('/data/')).length,
    tokenCalls: calls.filter((call) => call.path === '/connect/token').length,
    maxOverlap,
    criticalPath: Math.max(0, ...depth),
  };
}
