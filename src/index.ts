import 'reflect-metadata';
import { announceGateway, RegistryFolderError } from './cli/gateway.registry';
import { ConfigError, loadConfig, withProvider, type ResolvedConfig } from './platform/config/config';
import { connectToSandbox, pointSandboxWebhooksAt, startEmbeddedSandbox } from './embedded-sandbox';
import { createLogger } from './platform/observability/logger';
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
  const logger = createLogger(config.logLevel);
  const closers: (() => Promise<void>)[] = [];
  let resolved: ResolvedConfig;
  let sandboxLogin: string | undefined;
  let sandboxUrl: string | undefined;
  if (config.provider === 'sandbox' && config.sandbox.url) {
    sandboxUrl = config.sandbox.url;
    resolved = withProvider(config, await connectToSandbox(sandboxUrl));
  } else if (config.provider === 'sandbox') {
    const { sandbox, provider } = await startEmbeddedSandbox(config).catch((error: unknown) => {
      throw portInUse(error, `the embedded sandbox's port ${config.sandbox.port} is in use: leave SANDBOX_PORT unset for a free port, or set another`);
    });
    closers.push(() => sandbox.close());
    resolved = withProvider(config, provider);
    const user = sandbox.context.fixtures.users[0];
    sandboxLogin = user ? `${user.username} / ${user.password}` : undefined;
    sandboxUrl = sandbox.url;
    logger.info({ sandbox: sandbox.url }, 'embedded sandbox provider started');
  } else {
    resolved = withProvider(config, config.provider);
  }

  const gateway = await createGateway(resolved, { logger }).catch((error: unknown) => {
    throw portInUse(
      error,
      `port ${config.port} on ${config.host} is in use: stop what listens there, or move the gateway with PORT (PORT=${config.port + 1} npm start)`,
    );
  });
  closers.unshift(() => gateway.close());
  const publicUrl = resolved.publicUrl ?? gateway.url;
  if (config.provider === 'sandbox') {
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
  const listening = listeningAddress(config.host, gateway.url);
  if (!sameAddress(listening, publicUrl)) lines.push(`  listening on ${listening} (HOST, PORT); browsers and the bank use PUBLIC_URL ${publicUrl}`);
  if (config.corsOrigins.length > 0) lines.push(`  browser apps admitted on their own origin (CORS_ORIGINS): ${config.corsOrigins.join(', ')}`);
  if (config.allowedOrigins.length > 0) {
    lines.push('  ALLOWED_ORIGINS is now CORS_ORIGINS: its origins are admitted as CORS_ORIGINS are, on HTTP too; rename the setting');
  }
  const login = sandboxLogin ? ` — login ${sandboxLogin}` : '';
  if (resolved.appIdentity) {
    lines.push(`  app identity: requests carry your app's access token from ${resolved.appIdentity.issuer} (docs/identity.md)`);
    if (sandboxUrl) lines.push(`  connect a sandbox bank with POST ${publicUrl}/auth/connections and that token${login}`);
  } else if (sandboxUrl) {
    lines.push(`  sign in with the sandbox bank at ${publicUrl}/auth/login${login}`);
  }
  if (config.sandbox.url) lines.push(`  sandbox provider: ${sandboxUrl} (SANDBOX_URL; its logins: GET ${sandboxUrl}/sandbox/fixtures)`);
  else if (sandboxUrl) lines.push(`  embedded sandbox provider: ${sandboxUrl} (SANDBOX_PORT fixes its port)`);
  if (config.merchantKeysGenerated) lines.push(`  merchant key for this run (set MERCHANT_KEYS to choose your own): ${config.merchantKeys[0]}`);
  console.log(lines.join('\n'));

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      // A second signal means "now": the operator has stopped waiting for the drain.
      logger.warn({ signal }, 'second signal: exiting without finishing the shutdown');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutting down: draining HTTP and WebSocket clients');
    // The gateway drains within SHUTDOWN_TIMEOUT_MS; this is the backstop if closing a store hangs after that.
    const backstop = setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + 5_000);
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
