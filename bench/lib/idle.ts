import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildServer } from './child-server';

/** A process counts as idle once it used at most this share of one core over a whole probe. */
const IDLE_SHARE = 0.05;
const PROBE_MS = 200;

/**
 * Waits until every one of `servers` has gone quiet. A load window ends by dropping its connections with requests
 * still in flight; a gateway that does not cancel work on a closed connection (the naive one) goes on answering
 * them, and that backlog would be counted in the next window: its CPU in the execution scenario's figures, its
 * queueing in the next window's latencies (enough, on a slow machine, that a one-second window completes nothing).
 */
export async function waitUntilIdle(servers: readonly ChildServer[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const before = servers.map((server) => server.threadsCpuMs());
    await sleep(PROBE_MS);
    const busy = servers.filter((server, index) => server.threadsCpuMs() - before[index]! > PROBE_MS * IDLE_SHARE);
    if (busy.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`${busy.map((server) => server.label).join(', ')} still busy ${timeoutMs} ms after the load stopped`);
    }
  }
}
