import type { KeyObject } from 'node:crypto';
import type { SandboxClock } from './clock';
import type { Fixtures } from './fixtures/types';
import type { Router } from './http/router';
import type { Ledger } from './ledger';
import type { AccessTokens } from './tokens';
import type { WebhookSender } from './webhooks';

/** The one application registered with the sandbox provider, as a real provider's console would hold it. */
export interface SandboxClient {
  clientId: string;
  clientSecret: string;
  /** Allow-listed redirect URIs; for loopback hosts any port matches (RFC 8252 §7.3). */
  redirectUris: string[];
  /** Request-signing public keys by kid. */
  signingKeys: Map<string, KeyObject>;
  /** Where refund webhooks go; none are sent while unset. */
  paymentsWebhookUrl?: string;
}

export interface SandboxContext {
  clock: SandboxClock;
  tokens: AccessTokens;
  client: SandboxClient;
  fixtures: Fixtures;
  webhooks: WebhookSender;
  ledger: Ledger;
  /** The sandbox's own address, e.g. http://127.0.0.1:4010 (known once listening). */
  origin(): string;
}

export interface SandboxRoutes {
  /** Provider endpoints: logged, subject to faults and latency. */
  provider: Router;
  /** `/sandbox/...` control endpoints: never logged or faulted. */
  control: Router;
}

export type RouteModule = (routes: SandboxRoutes, context: SandboxContext) => void;
