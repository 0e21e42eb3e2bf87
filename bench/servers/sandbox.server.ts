import 'reflect-metadata';
import type { ProviderConfig } from '../../src/platform/config/config';
import { startEmbeddedSandbox } from '../../src/embedded-sandbox';
import type { FixtureSizes } from '../../src/sandbox/fixtures/types';
import { runChild } from './child.runtime';

export interface SandboxInit {
  latencyMs: number;
  fixtures: FixtureSizes;
  /** Sandbox time per real time (1 unless a scenario needs the sandbox's own schedule out of its way). */
  timeScale?: number;
}

export interface SandboxInfo {
  url: string;
  /** What a gateway needs to talk to this sandbox, the signing key included (it stays on loopback, in IPC). */
  provider: ProviderConfig;
}

// The mock provider, in its own process so its CPU time is not charged to the gateway being measured.
runChild(async (init) => {
  const { latencyMs, fixtures, timeScale = 1 } = init as SandboxInit;
  const { sandbox, provider } = await startEmbeddedSandbox({ provider: { kind: 'sandbox', port: 0, latencyMs, timeScale } }, { host: '127.0.0.1', fixtures });
  const info: SandboxInfo = { url: sandbox.url, provider };
  return { info, close: () => sandbox.close() };
});
