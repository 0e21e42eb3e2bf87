import 'reflect-metadata';
import { announceGateway, RegistryFolderError } from './cli/gateway.registry';
import { ConfigError, loadConfig, withProvider, type Config, type ResolvedConfig } from './platform/config/config';
import { connectToSandbox, pointSandboxWebhooksAt, startEmbeddedSandbox } from './embedded-sandbox';
import { createLogger, type Logger } from './platform/observability/logger';
import { createGateway } from './app/gateway';

/** Start-up only: read the configuration, start the embedded sandbox when asked, start the gateway. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.observability.logLevel);
  const closers: (() => Promise<void>)[] = [];
  const { resolved, sandboxUrl, sandboxLogin, close } = await resolveProvider(config, logger);
  if (close) closers.push(close);

  const gateway = await createGateway(resolved, { logger }).catch((error: unknown) => {
    throw portInUse(
      error,
      `port ${config.server.port} on ${config.server.host} is in use: stop what listens there, or move the gateway with PORT (PORT=${config.server.port + 1} npm start)`,
    );
  });
  closers.unshift(() => gateway.close());
  const publicUrl = resolved.server.publicUrl ?? gateway.url;
  if (config.provider.kind === 'sandbox') {
    await pointSandboxWebhooksAt(resolved.provider.authUrl, publicUrl);
    // So that `npm run sandbox:login` finds this gateway whatever PORT it runs on.
    const announced = await announceGateway(publicUrl).catch((error: unknown) => {
      // A folder another user could write is not used; the gateway runs on, `sandbox:login` just cannot find it.
      if (error instanceof RegistryFolderError) logger.warn(error.message);
      else logger.warn({ err: error }, 'this gateway could not be noted for `npm run sandbox:login`: name it there with --gateway <url> or PORT');
      return undefined;
    });
    if (announced) closers.push(announced);
  }

  const lines = [`bankgraph is up: ${publicUrl}/graphql (playground in a browser, GraphQL over HTTP and WebSocket, subscriptions over SSE at /graphql/stream)`];
  const listening = listeningAddress(config.server.host, gateway.url);
  if (!sameAddress(listening, publicUrl)) lines.push(`  listening on ${listening} (HOST, PORT); browsers and the bank use PUBLIC_URL ${publicUrl}`);
  if (config.server.corsOrigins.length > 0) lines.push(`  browser apps admitted on their own origin (CORS_ORIGINS): ${config.server.corsOrigins.join(', ')}`);
  for (const note of config.notes) lines.push(`  ${note}`);
  const login = sandboxLogin ? ` — login ${sandboxLogin}` : '';
  if (resolved.identity.app) {
    lines.push(`  app identity: requests carry your app's access token from ${resolved.identity.app.issuer} (docs/identity.md)`);
    if (sandboxUrl) lines.push(`  connect a sandbox bank with POST ${publicUrl}/auth/connections and that token${login}`);
  } else if (sandboxUrl) {
    lines.push(`  sign in with the sandbox bank at ${publicUrl}/auth/login${login}`);
  }
  if (config.provider.kind === 'sandbox' && config.provider.url)
    lines.push(`  sandbox provider: ${sandboxUrl} (SANDBOX_URL; its logins: GET ${sandboxUrl}/sandbox/fixtures)`);
  else if (sandboxUrl) lines.push(`  embedded sandbox provider: ${sandboxUrl} (SANDBOX_PORT fixes its port)`);
  if (config.identity.merchantKeysGenerated)
    lines.push(`  merchant key for this run (set MERCHANT_KEYS to choose your own): ${config.identity.merchantKeys[0]}`);
  console.log(lines.join('\n'));

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      // A second signal means "now": the operator has stopped waiting for the drain.
      logger.warn({ signal }, 'second signal: exiting without finishing the shutdown');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal, timeoutMs: config.limits.shutdownTimeoutMs }, 'shutting down: draining HTTP and WebSocket clients');
    // The gateway drains within SHUTDOWN_TIMEOUT_MS; this is the backstop if closing a store hangs after that.
    const backstop = setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, config.limits.shutdownTimeoutMs + 5_000);
    backstop.unref();
    void (async () => {
      let failed = false;
      for (const close of closers) {
        try {
          await close();
        } catch (error) {
          failed = true;
          logger.error({ err: error }, 'error while shutting down');
        }
      }
      logger.info('shutdown complete');
      process.exit(failed ? 1 : 0);
    })();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/**
 * PROVIDER, resolved once: a remote provider's settings as given; a standalone sandbox (SANDBOX_URL) asked for its
 * own; else an embedded sandbox started here, whose addresses are known once it listens.
 */
async function resolveProvider(
  config: Readonly<Config>,
  logger: Logger,
): Promise<{ resolved: Readonly<ResolvedConfig>; sandboxUrl?: string; sandboxLogin?: string; close?: () => Promise<void> }> {
  const { provider } = config;
  if (provider.kind === 'remote') return { resolved: withProvider(config, provider) };
  if (provider.url) return { resolved: withProvider(config, await connectToSandbox(provider.url)), sandboxUrl: provider.url };
  const started = await startEmbeddedSandbox(config).catch((error: unknown) => {
    throw portInUse(error, `the embedded sandbox's port ${provider.port} is in use: leave SANDBOX_PORT unset for a free port, or set another`);
  });
  const user = started.sandbox.context.fixtures.users[0];
  logger.info({ sandbox: started.sandbox.url }, 'embedded sandbox provider started');
  return {
    resolved: withProvider(config, started.provider),
    sandboxUrl: started.sandbox.url,
    sandboxLogin: user ? `${user.username} / ${user.password}` : undefined,
    close: () => started.sandbox.close(),
  };
}

/** Where the server listens, as a URL: HOST (0.0.0.0 or :: for every interface) and the port it took. */
function listeningAddress(host: string, gatewayUrl: string): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${new URL(gatewayUrl).port}`;
}

/** The loopback names are one address for this line: PUBLIC_URL http://localhost:4000 on 127.0.0.1:4000 says nothing new. */
function sameAddress(listening: string, publicUrl: string): boolean {
  const loopback = new Set(['localhost', '127.0.0.1', '[::1]']);
  const a = new URL(listening);
  const b = new URL(publicUrl);
  const sameHost = a.hostname === b.hostname || (loopback.has(a.hostname) && loopback.has(b.hostname));
  return a.protocol === b.protocol && a.port === b.port && sameHost && b.pathname.replace(/\/+$/, '') === '';
}

/** A listen that failed because the address is taken becomes `message`, which names the variable that moves it. */
function portInUse(error: unknown, message: string): unknown {
  return (error as { code?: unknown } | null)?.code === 'EADDRINUSE' ? new Error(message) : error;
}

void main().catch((error: unknown) => {
  console.error('bankgraph failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
