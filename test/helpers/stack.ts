import 'reflect-metadata';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print, type DocumentNode } from 'graphql';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, withProvider, type ProviderConfig, type ResolvedConfig } from '../../src/platform/config/config';
import { pointSandboxWebhooksAt, startEmbeddedSandbox } from '../../src/embedded-sandbox';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/app/gateway';
import type { Sandbox, SandboxOptions } from '../../src/sandbox/sandbox';
import { signInAt as signInThroughBank, type SignInOptions as SignInAtOptions } from '../../src/cli/gateway-sign-in';
import { REDIS_URL } from './redis';

export type { SignInAtOptions };

export interface Stack {
  sandbox: Sandbox;
  gateway: Gateway;
  config: ResolvedConfig;
  merchantKey: string;
  /** Signs in through the gateway's /auth/login and the sandbox bank's form; returns the session token. */
  signIn(username?: string, password?: string, options?: SignInAtOptions): Promise<string>;
  graphql<T = Record<string, unknown>, V = Record<string, unknown>>(
    query: string | TypedDocumentNode<T, V>,
    variables?: V,
    token?: string,
    headers?: Record<string, string>,
  ): Promise<GraphQLResult<T>>;
  /** Stops the gateway and starts a new one on the same configuration and store (the sandbox keeps running). */
  restartGateway(): Promise<void>;
  sandboxJson<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  close(): Promise<void>;
}

export interface GraphQLResult<T> {
  status: number;
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
  extensions?: Record<string, unknown>;
}

export const MERCHANT_KEY = 'test-merchant-key-0123456789abcdef';

/**
 * The environment of gateways that act as one deployment: one store (a PostgreSQL schema), one Redis under one key
 * prefix for cache, bus and rate limits (lifted: these tests count money, not requests), the tests' short backoffs.
 */
export function oneDeploymentEnv(storeUrl: string, redisKeyPrefix: string): Record<string, string> {
  return {
    NODE_ENV: 'test',
    PORT: '0',
    SANDBOX_PORT: '0',
    STORE_URL: storeUrl,
    CACHE_URL: REDIS_URL,
    PUBSUB_URL: REDIS_URL,
    REDIS_KEY_PREFIX: redisKeyPrefix,
    MERCHANT_KEYS: MERCHANT_KEY,
    HTTP_BACKOFF_BASE_MS: '5',
    HTTP_BACKOFF_CAP_MS: '20',
    RATE_LIMIT_PER_SECOND: '0',
  };
}

/** A sandbox and a gateway on port 0, wired as `npm start` wires them, with an in-memory store unless given one. */
export async function startStack(
  options: {
    sandbox?: Partial<SandboxOptions>;
    env?: Record<string, string>;
    /** Adjusts the provider settings the sandbox reports (e.g. more WEBHOOK_JWKS_URLS). */
    provider?: (provider: ProviderConfig) => ProviderConfig;
    gateway?: GatewayOptions;
  } = {},
): Promise<Stack> {
  // A real SQLite file, so a restarted gateway finds its sessions as it would in production.
  const dataDir = mkdtempSync(join(tmpdir(), 'bankgraph-test-'));
  const base = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    SANDBOX_PORT: '0',
    STORE_URL: `sqlite://${join(dataDir, 'gateway.sqlite')}`,
    MERCHANT_KEYS: MERCHANT_KEY,
    HTTP_BACKOFF_BASE_MS: '5',
    HTTP_BACKOFF_CAP_MS: '20',
    ...options.env,
  });
  const started = await startEmbeddedSandbox(base, options.sandbox);
  const { sandbox } = started;
  const provider = options.provider ? options.provider(started.provider) : started.provider;
  let gateway: Gateway;
  try {
    gateway = await createGateway(withProvider(base, provider), options.gateway);
    await pointSandboxWebhooksAt(sandbox.url, gateway.url);
  } catch (error) {
    await sandbox.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const config = withProvider(base, provider);

  return {
    sandbox,
    get gateway() {
      return gateway;
    },
    config,
    merchantKey: MERCHANT_KEY,
    signIn(username = 'john', password = 'doe', signInOptions = {}) {
      return signInAt(gateway.url, username, password, signInOptions);
    },
    graphql(query, variables, token, headers = {}) {
      return graphqlAt(gateway.url, query, variables, token, headers);
    },
    sandboxJson(method, path, body) {
      return sandboxJsonAt(sandbox.url, method, path, body);
    },
    async restartGateway() {
      await gateway.close();
      gateway = await createGateway(config, options.gateway);
      await pointSandboxWebhooksAt(sandbox.url, gateway.url);
    },
    async close() {
      try {
        await gateway.close();
      } finally {
        await sandbox.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/** One GraphQL request over HTTP POST to a gateway, as a client sends it. */
export async function graphqlAt<T>(
  gatewayUrl: string,
  query: string | DocumentNode,
  variables?: unknown,
  token?: string,
  headers: Record<string, string> = {},
): Promise<GraphQLResult<T>> {
  const response = await fetch(`${gatewayUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: JSON.stringify({ query: typeof query === 'string' ? query : print(query), variables }),
  });
  return { status: response.status, ...((await response.json()) as object) };
}

/** A sandbox control or data route answering JSON; anything but 2xx fails the test with the sandbox's answer. */
export async function sandboxJsonAt<T = unknown>(sandboxUrl: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${sandboxUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`sandbox ${method} ${path}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** Signs in through a gateway's /auth/login and the sandbox bank's form; returns the session token. */
export function signInAt(gatewayUrl: string, username = 'john', password = 'doe', options: SignInAtOptions = {}): Promise<string> {
  return signInThroughBank(gatewayUrl, username, password, options);
}
