import type { KeyObject } from 'node:crypto';
import { publicKeyFromPem } from '../signing';
import { sendJson, sendProviderJson, OAuthStyleError } from '../http/respond';
import type { SandboxRequest } from '../http/request';
import { validateFaultSpec, type FaultInjector } from '../faults';
import type { RequestLog } from '../request-log';
import type { SandboxContext, SandboxRoutes } from '../context';
import { addAccount, MOCK_BANKS, MOCK_PROVIDER_ID } from '../fixtures/users';

/** Control routes for tests and demos (docs/sandbox.md); errors here are plain `{error, error_description}`. */
export function registerControlRoutes({ control }: SandboxRoutes, context: SandboxContext, faults: FaultInjector, requestLog: RequestLog): void {
  let addedAccounts = 0;
  control
    .add('POST', '/sandbox/faults', (req, res) => {
      const spec = validateFaultSpec(jsonBody(req));
      if (typeof spec === 'string') throw new OAuthStyleError(400, 'invalid_request', spec);
      sendJson(res, 201, { id: faults.add(spec), ...spec });
    })
    .add('GET', '/sandbox/faults', (_req, res) => sendJson(res, 200, { faults: faults.list() }))
    .add('DELETE', '/sandbox/faults', (_req, res) => {
      faults.clear();
      sendJson(res, 200, { faults: [] });
    })
    .add('GET', '/sandbox/requests', (_req, res) => sendJson(res, 200, { requests: requestLog.list() }))
    .add('DELETE', '/sandbox/requests', (_req, res) => {
      requestLog.clear();
      sendJson(res, 200, { requests: [] });
    })
    .add('GET', '/sandbox/ledger', (_req, res) => sendJson(res, 200, context.ledger.list()))
    .add('GET', '/sandbox/webhooks', (_req, res) => sendJson(res, 200, { deliveries: context.webhooks.list() }))
    .add('GET', '/sandbox/fixtures', (_req, res) => sendProviderJson(res, 200, fixturesView(context)))
    // What a provider's console shows a developer: a gateway started with SANDBOX_URL reads its credentials here.
    .add('GET', '/sandbox/client', (_req, res) =>
      sendJson(res, 200, { client_id: context.client.clientId, client_secret: context.client.clientSecret, redirect_uris: context.client.redirectUris }),
    )
    .add('POST', '/sandbox/users/:username/accounts', (req, res) => {
      const body = jsonBody(req) as { bank?: unknown; displayName?: unknown };
      const bank = body.bank ?? MOCK_PROVIDER_ID;
      const displayName = body.displayName ?? 'New Current Account';
      if (typeof displayName !== 'string' || displayName.trim() === '' || displayName.length > 64) {
        throw new OAuthStyleError(400, 'invalid_request', 'displayName must be a non-empty string of at most 64 characters');
      }
      const user = context.fixtures.users.find((candidate) => candidate.username === req.params.username && candidate.providerId === bank);
      if (!user)
        throw new OAuthStyleError(
          404,
          'not_found',
          `no user ${JSON.stringify(req.params.username)} at bank ${JSON.stringify(bank)}; see GET /sandbox/fixtures`,
        );
      addedAccounts += 1;
      sendProviderJson(res, 201, addAccount(user, displayName, addedAccounts).account);
    })
    .add('GET', '/sandbox/clock', (_req, res) => sendJson(res, 200, clockView(context)))
    .add('POST', '/sandbox/clock', (req, res) => {
      const body = jsonBody(req) as { advanceSeconds?: unknown };
      // Bounded so sandbox time stays a valid Date: past year 275760 every later clock read would throw.
      if (typeof body?.advanceSeconds !== 'number' || !(body.advanceSeconds >= 0) || body.advanceSeconds > MAX_ADVANCE_SECONDS) {
        throw new OAuthStyleError(400, 'invalid_request', `advanceSeconds must be a number of seconds from 0 to ${MAX_ADVANCE_SECONDS} (100 years)`);
      }
      context.clock.advance(body.advanceSeconds);
      sendJson(res, 200, clockView(context));
    })
    .add('POST', '/sandbox/config', (req, res) => {
      const body = jsonBody(req) as { paymentsWebhookUrl?: unknown };
      if (body.paymentsWebhookUrl !== undefined && !isHttpUrl(body.paymentsWebhookUrl)) {
        throw new OAuthStyleError(400, 'invalid_request', 'paymentsWebhookUrl must be an http(s) URL');
      }
      if (body.paymentsWebhookUrl !== undefined) context.client.paymentsWebhookUrl = body.paymentsWebhookUrl as string;
      sendJson(res, 200, { paymentsWebhookUrl: context.client.paymentsWebhookUrl ?? null });
    })
    .add('POST', '/sandbox/signing-keys', (req, res) => {
      const body = jsonBody(req) as { kid?: unknown; publicKeyPem?: unknown };
      if (typeof body.kid !== 'string' || body.kid === '' || typeof body.publicKeyPem !== 'string') {
        throw new OAuthStyleError(400, 'invalid_request', 'send { "kid": string, "publicKeyPem": string }');
      }
      let key: KeyObject;
      try {
        key = publicKeyFromPem(body.publicKeyPem);
      } catch {
        throw new OAuthStyleError(400, 'invalid_request', 'publicKeyPem is not a PEM-encoded public key');
      }
      // ES512 signatures only verify with a P-521 key; any other key would fail every request later, less clearly.
      if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'secp521r1') {
        throw new OAuthStyleError(400, 'invalid_request', 'publicKeyPem must be an EC P-521 public key (request signatures are ES512)');
      }
      context.client.signingKeys.set(body.kid, key);
      sendJson(res, 201, { kid: body.kid });
    });
}

const MAX_ADVANCE_SECONDS = 100 * 366 * 24 * 3600;

function jsonBody(req: SandboxRequest): Record<string, unknown> {
  let body: unknown;
  try {
    body = req.json();
  } catch (error) {
    throw new OAuthStyleError(400, 'invalid_request', (error as Error).message);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OAuthStyleError(400, 'invalid_request', 'the body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

function clockView(context: SandboxContext): { now: string; timeScale: number } {
  return { now: context.clock.iso(), timeScale: context.clock.timeScale };
}

/** Everything seeded, including the mock bank logins: this route exists so tests can check answers field by field. */
function fixturesView(context: SandboxContext): unknown {
  return {
    client: { client_id: context.client.clientId, redirect_uris: context.client.redirectUris },
    banks: MOCK_BANKS,
    users: context.fixtures.users,
    payments: context.fixtures.payments,
  };
}
