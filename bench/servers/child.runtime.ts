import { getHeapSpaceStatistics } from 'node:v8';
import type { ChildMessage, MemorySample, ParentMessage } from '../lib/ipc.types';

export interface StartedServer {
  /** Whatever the parent needs to reach the server (URLs, credentials); must survive JSON serialisation. */
  info: unknown;
  close(): Promise<void>;
  /** The child's own operations, for children that are load generators rather than servers. */
  call?(method: string, args: unknown): Promise<unknown>;
}

/**
 * The child side of the bench IPC: waits for `start`, runs `start(init)`, answers `memory` and `close`. A child
 * whose parent goes away exits at once, so a crashed or interrupted bench never leaves servers running.
 */
export function runChild(start: (init: unknown) => Promise<StartedServer>): void {
  if (!process.send) throw new Error('this script is a bench child; run it through `npm run bench`');
  let server: StartedServer | undefined;
  const reply = (message: ChildMessage): void => {
    process.send?.(message);
  };
  process.on('disconnect', () => process.exit(0));
  process.on('message', (raw: ParentMessage) => {
    void handle(raw).then(
      (value) => reply({ type: 'reply', id: raw.id, ok: true, value: value ?? null }),
      (error: unknown) => reply({ type: 'reply', id: raw.id, ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
    );
  });

  async function handle(message: ParentMessage): Promise<unknown> {
    switch (message.type) {
      case 'start':
        if (server) throw new Error('already started');
        server = await start(message.init);
        return server.info;
      case 'memory':
        return memorySample(message.gc);
      case 'call':
        if (!server?.call) throw new Error(`this child has no operation ${message.method}`);
        return server.call(message.method, message.args);
      case 'close':
        try {
          await server?.close();
        } finally {
          // Exit after the reply is flushed; the parent also waits for the exit.
          setImmediate(() => process.exit(0));
        }
        return null;
    }
  }
}

function memorySample(gc: boolean): MemorySample {
  const collect = (globalThis as { gc?: () => void }).gc;
  // Two passes: the first can leave objects with finalizers for the second.
  if (gc && collect) {
    collect();
    collect();
  }
  const usage = process.memoryUsage();
  const youngGeneration = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
  return {
    rssBytes: usage.rss,
    heapUsedBytes: usage.heapUsed,
    externalBytes: usage.external,
    youngGenerationBytes: youngGeneration?.physical_space_size ?? 0,
    collected: gc && collect !== undefined,
  };
}
