import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { ProviderConfig, SandboxConfig } from './platform/config/config';
import { createSandbox, type Sandbox, type SandboxOptions } from './sandbox/sandbox';

const SIGNING_KEY_ID = 'bankgraph-embedded-1';

/**
 * PROVIDER=sandbox: starts the mock provider in this process and registers this gateway with it the way a
 * real provider's console would (client credentials, a request-signing public key, the payments webhook URL).
 * From then on the gateway talks to it over HTTP only, exactly as it would to the real provider.
 */
export async function startEmbeddedSandbox(
  config: { provider: Pick<SandboxConfig, 'kind' | 'port' | 'latencyMs' | 'timeScale'> | { kind: 'remote' } },
  overrides: Partial<SandboxOptions> = {},
): Promise<{ sandbox: Sandbox; provider: ProviderConfig }> {
  const settings = config.provider;
  if (settings.kind !== 'sandbox') throw new Error('the embedded sandbox runs with PROVIDER=sandbox only');
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-521' });
  const sandbox = await createSandbox({
    port: settings.port,
    latencyMs: settings.latencyMs,
    timeScale: settings.timeScale,
    signingKeys: [{ kid: SIGNING_KEY_ID, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() }],
    ...overrides,
  });
  const { client } = sandbox.context;
  return {
    sandbox,
    provider: {
      authUrl: sandbox.url,
      verificationUrl: sandbox.url,
      payoutUrl: sandbox.url,
      paymentsUrl: sandbox.url,
      dataUrl: sandbox.url,
      clientId: client.clientId,
      clientSecret: client.clientSecret,
      signingKey: { keyId: SIGNING_KEY_ID, privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
      webhookJwksUrls: [`${sandbox.url}/.well-known/jwks`],
    },
  };
}

/**
 * SANDBOX_URL: a standalone sandbox (`npm run sandbox`), shared by every instance pointed at it, set up the way
 * startEmbeddedSandbox sets up its own: this instance's request-signing key is registered under a key id of its own
 * (so instances never replace each other's), and the client credentials and JWKS address are read from the sandbox.
 * What takes thirteen variables with PROVIDER=remote is asked of the sandbox's control routes.
 */
export async function connectToSandbox(sandboxUrl: string): Promise<ProviderConfig> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-521' });
  const keyId = `bankgraph-${randomUUID()}`;
  const client = await sandboxControl<{ client_id: string; client_secret: string }>(sandboxUrl, 'GET', '/sandbox/client');
  await sandboxControl(sandboxUrl, 'POST', '/sandbox/signing-keys', { kid: keyId, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() });
  return {
    authUrl: sandboxUrl,
    verificationUrl: sandboxUrl,
    payoutUrl: sandboxUrl,
    paymentsUrl: sandboxUrl,
    dataUrl: sandboxUrl,
    clientId: client.client_id,
    clientSecret: client.client_secret,
    signingKey: { keyId, privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
    webhookJwksUrls: [`${sandboxUrl}/.well-known/jwks`],
  };
}

/** A sandbox started a moment before the gateway (`node dist/src/sandbox/main.js &`) is given this long to listen. */
const SANDBOX_START_WAIT_MS = 10_000;

async function sandboxControl<T>(sandboxUrl: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const giveUpAt = Date.now() + SANDBOX_START_WAIT_MS;
  let response: Response;
  for (;;) {
    try {
      response = await fetch(`${sandboxUrl}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      break;
    } catch (error) {
      const refused = error instanceof Error && (error.cause as { code?: unknown } | undefined)?.code === 'ECONNREFUSED';
      if (refused && Date.now() < giveUpAt) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        continue;
      }
      const reason = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
      throw new Error(`no sandbox answers at SANDBOX_URL=${sandboxUrl} (${reason}): start one with \`npm run sandbox\`, or fix SANDBOX_URL`, { cause: error });
    }
  }
  if (!response.ok) {
    throw new Error(`SANDBOX_URL=${sandboxUrl} is not a bankgraph sandbox, or refused ${method} ${path}: HTTP ${response.status}`);
  }
  return (await response.json()) as T;
}

/** Where the sandbox should send refund webhooks: this gateway's receiver. */
export async function pointSandboxWebhooksAt(sandboxUrl: string, gatewayPublicUrl: string): Promise<void> {
  const response = await fetch(`${sandboxUrl}/sandbox/config`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ paymentsWebhookUrl: `${gatewayPublicUrl}/webhooks/payments` }),
  });
  if (!response.ok) throw new Error(`the sandbox refused the webhook URL: HTTP ${response.status}`);
}
