import { parseLoginForm } from '../sandbox/auth/bank-form.reader';

const TIMEOUT_MS = 30_000;

/**
 * The gateway's real sign-in, done the way a browser does it against the sandbox bank: /auth/login, the bank's
 * form, the callback. Returns the session token the callback issues (sent as `Authorization: Bearer <token>`).
 */
export async function signInAt(gatewayUrl: string, username: string, password: string): Promise<string> {
  const start = await fetch(`${gatewayUrl}/auth/login?response=json`, { redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
  const bankPage = start.headers.get('location');
  if (start.status !== 302 || !bankPage) throw new Error(`expected ${gatewayUrl}/auth/login to redirect to the bank, got HTTP ${start.status}`);
  const page = await fetch(bankPage, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  const { action, fields } = parseLoginForm(await page.text(), bankPage);
  const submitted = await fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...fields, username, password }).toString(),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const callback = submitted.headers.get('location');
  if (submitted.status === 401) throw new Error(`the sandbox bank refused the login ${username} (seeded users: john, jane, lee; password doe)`);
  if (submitted.status !== 302 || !callback) throw new Error(`expected the bank to redirect back after sign-in, got HTTP ${submitted.status}`);
  const session = await fetch(callback, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(TIMEOUT_MS) });
  const body = (await session.json()) as { sessionToken?: string };
  if (!session.ok || !body.sessionToken) throw new Error(`expected a session from the gateway's callback, got HTTP ${session.status}`);
  return body.sessionToken;
}
