import { generateKeyPairSync } from 'node:crypto';
import type { Config, ProviderConfig } from './config';
import { createSandbox, type Sandbox, type SandboxOptions } from './sandbox/sandbox';

const SIGNING_KEY_ID = 'bankgraph-embedded-1';

/**
 * PROVIDER=sandbox: starts the mock provider in this process and registers this gateway with it the way a
 * real provider's console would (client credentials, a request-signing public key, the payments webhook URL).
 * From then on the gateway talks to it over HTTP only, exactly as it would to the real provider.
 */
export async function startEmbeddedSandbox(
  config: Pick<Config, 'sandbox'>,
  overrides: Partial<SandboxOptions> = {},
): Promise<{ sandbox: Sandbox; provider: ProviderConfig }> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-521' });
  const sandbox = await createSandbox({
    port: config.sandbox.port,
    latencyMs: config.sandbox.latencyMs,
    timeScale: config.sandbox.timeScale,
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

/** Where the sandbox should send refund webhooks: this gateway's receiver. */
export async function pointSandboxWebhooksAt(sandboxUrl: string, gatewayPublicUrl: string): Promise<void> {
  const response = await fetch(`${sandboxUrl}/sandbox/config`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ paymentsWebhookUrl: `${gatewayPublicUrl}/webhooks/payments` }),
  });
  if (!response.ok) throw new Error(`the sandbox refused the webhook URL: HTTP ${response.status}`);
}
