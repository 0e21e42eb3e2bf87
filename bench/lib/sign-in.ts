import { createHash, randomBytes } from 'node:crypto';
import type { ProviderConfig } from '../../src/platform/config/config';
import { parseLoginForm } from '../../src/sandbox/auth/bank-form.reader';

const TIMEOUT_MS = 30_000;
/** Loopback: the sandbox allow-lists http://localhost/auth/callback for any port (RFC 8252 §7.3). */
const NAIVE_REDIRECT_URI = 'http://localhost:3999/auth/callback';

/** The gateway's own sign-in, as an app does it: /auth/login?response=json, the bank's form, the callback. */
export async function gatewaySession(gatewayUrl: string, username: string, password: string): Promise<string> {
  const start = await fetch(`${gatewayUrl}/auth/login?response=json`, { redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
  const bankPage = start.headers.get('location');
  const binding = start.headers.get('login-binding');
  if (start.status !== 302 || !bankPage || !binding)
    throw new Error(`expected /auth/login to redirect to the bank with a Login-Binding, got HTTP ${start.status}`);
  const callback = await submitBankForm(bankPage, username, password);
  const session = await fetch(callback, { headers: { accept: 'application/json', 'login-binding': binding }, signal: AbortSignal.timeout(TIMEOUT_MS) });
  const body = (await session.json()) as { sessionToken?: string };
  if (!session.ok || !body.sessionToken) throw new Error(`expected a session from the gateway's callback, got HTTP ${session.status}`);
  return body.sessionToken;
}

/**
 * What the naive gateway expects from its clients: a provider access token, got the way an app without a
 * backend-for-frontend gets one (the bank's form, then POST /connect/token with the client's credentials).
 */
export async function providerAccessToken(provider: ProviderConfig, username: string, password: string): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${provider.authUrl}/`);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: provider.clientId,
    redirect_uri: NAIVE_REDIRECT_URI,
    scope: 'info accounts',
    state: randomBytes(8).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const redirect = await submitBankForm(authorize.toString(), username, password);
  const code = new URL(redirect).searchParams.get('code');
  if (!code) throw new Error('the bank redirected without a code');
  const response = await fetch(`${provider.authUrl}/connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: NAIVE_REDIRECT_URI,
      code_verifier: verifier,
      client_id: provider.clientId,
      client_secret: provider.clientSecret,
    }).toString(),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!response.ok || !body.access_token) throw new Error(`the token endpoint answered HTTP ${response.status}`);
  return body.access_token;
}

/** Opens the bank's page, posts its form with the login, and returns where the bank redirects to. */
async function submitBankForm(pageUrl: string, username: string, password: string): Promise<string> {
  const page = await fetch(pageUrl, { redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
  const html = await page.text();
  if (page.status !== 200) throw new Error(`the bank page answered HTTP ${page.status}`);
  const { action, fields } = parseLoginForm(html, pageUrl);
  const submitted = await fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...fields, username, password }).toString(),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const location = submitted.headers.get('location');
  if (submitted.status !== 302 || !location) throw new Error(`expected the bank to redirect after sign-in, got HTTP ${submitted.status}`);
  return location;
}
