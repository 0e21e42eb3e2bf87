import type { FixtureSizes } from '../../src/sandbox/fixtures/types';
import type { CeilingInit } from '../servers/ceiling.server';
import type { FanOutFloorInit } from '../servers/fan-out-floor.server';
import type { FloorInit } from '../servers/floor.server';
import type { GatewayInfo, GatewayInit } from '../servers/gateway.server';
import type { NaiveInit } from '../servers/naive.server';
import type { SandboxInfo, SandboxInit } from '../servers/sandbox.server';
import type { SubscribersInit } from '../servers/subscribers.client';
import { ChildServer } from './child-server';

/**
 * Every child the bench started, so each is closed (by its own handle, never by name) when its scenario ends,
 * when the bench fails, or when it is interrupted.
 */
export class Children {
  private readonly running = new Set<ChildServer>();

  async start<Info>(options: Parameters<typeof ChildServer.start>[0]): Promise<ChildServer<Info>> {
    const child = await ChildServer.start<Info>(options);
    this.running.add(child as ChildServer);
    return child;
  }

  async close(...children: ChildServer<unknown>[]): Promise<void> {
    await Promise.all(
      children.map(async (child) => {
        this.running.delete(child as ChildServer);
        await child.close();
      }),
    );
  }

  async closeAll(): Promise<void> {
    await this.close(...this.running);
  }
}

export function startSandbox(children: Children, label: string, latencyMs: number, fixtures: FixtureSizes, timeScale = 1): Promise<ChildServer<SandboxInfo>> {
  return children.start<SandboxInfo>({ script: 'sandbox.server', label, init: { latencyMs, fixtures, timeScale } satisfies SandboxInit });
}

/**
 * bankgraph; started with --expose-gc so its memory can be sampled after a full collection, and with glibc's
 * malloc held to two arenas, as `npm start` runs it (docs/scaling.md, "Memory of one instance").
 */
export function startBankgraph(
  children: Children,
  sandbox: ChildServer<SandboxInfo>,
  env?: Record<string, string>,
  label = 'bankgraph',
  keyPrefix?: string,
): Promise<ChildServer<GatewayInfo>> {
  return children.start<GatewayInfo>({
    script: 'gateway.server',
    label,
    exposeGc: true,
    env: { MALLOC_ARENA_MAX: '2' },
    init: { provider: sandbox.info.provider, env, keyPrefix } satisfies GatewayInit,
  });
}

/** A fleet of subscribers (graphql-ws, SSE or multipart) in its own process (bench/servers/subscribers.client.ts). */
export function startSubscriberClient(children: Children, label: string, init: SubscribersInit): Promise<ChildServer<{ pid: number }>> {
  return children.start<{ pid: number }>({ script: 'subscribers.client', label, init });
}

export function startNaive(children: Children, sandbox: ChildServer<SandboxInfo>): Promise<ChildServer<{ url: string }>> {
  return children.start<{ url: string }>({
    script: 'naive.server',
    label: 'naive gateway',
    exposeGc: true,
    init: { dataUrl: sandbox.info.provider.dataUrl } satisfies NaiveInit,
  });
}

export function startCeiling(children: Children, init: CeilingInit): Promise<ChildServer<{ url: string }>> {
  return children.start<{ url: string }>({ script: 'ceiling.server', label: 'node:http ceiling', init });
}

/** Scenario 7's floor (bench/servers/floor.server.ts): the query's provider calls and JSON.parse, then bankgraph's bytes. */
export function startFloor(children: Children, init: FloorInit): Promise<ChildServer<{ url: string }>> {
  return children.start<{ url: string }>({ script: 'floor.server', label: 'execution floor', init });
}

/** Scenario 9's floor for one transport (bench/servers/fan-out-floor.server.ts): the same bytes written to every subscriber. */
export function startFanOutFloor(children: Children, init: FanOutFloorInit): Promise<ChildServer<{ url: string }>> {
  return children.start<{ url: string }>({ script: 'fan-out-floor.server', label: `${init.transport} fan-out floor`, init });
}
