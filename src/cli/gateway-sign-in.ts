import { parseLoginForm } from '../sandbox/auth/bank-form.reader';

const TIMEOUT_MS = 30_000;

export interface SignInOptions {
  /** The bank picked on the sandbox bank's page (a provider id: mock, mock-north); the first bank when omitted. */
  bank?: string;
  /** Signed in already: the new bank becomes another connection of this session's user. */
  sessionToken?: string;
}

/**
 * The gateway's real sign-in, done the way an app does it against the sandbox bank: /auth/login?response=json,
 * the bank's form, the callback with the Login-Binding value /auth/login answered. Returns the session token the
 * callback issues (sent as `Authorization: Bearer <token>`).
 */
export async function signInAt(gatewayUrl: string, username: string, password: string, options: SignInOptions = {}): Promise<string> {
  const start = await fetch(`${gatewayUrl}/auth/login?response=json`, {
    redirect: 'manual',
    headers: options.sessionToken ? { authorization: `Bearer ${options.sessionToken}` } : {},
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const bankPage = start.headers.get('location');
  const binding = start.headers.get('login-binding');
  if (start.status !== 302 || !bankPage || !binding) {
    throw new Error(`expected ${gatewayUrl}/auth/login to redirect to the bank with a Login-Binding, got HTTP ${start.status}`);
  }
  const page = await fetch(bankPage, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  const { action, fields } = parseLoginForm(await page.text(), bankPage);
  const submitted = await fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...fields, ...(options.bank ? { bank: options.bank } : {}), username, password }).toString(),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const callback = submitted.headers.get('location');
  if (submitted.status === 401) throw new Error(`the sandbox bank refused the login ${username} (GET /sandbox/fixtures lists the logins; password doe)`);
  if (submitted.status !== 302 || !callback) throw new Error(`expected the bank to redirect back after sign-in, got HTTP ${submitted.status}`);
  const session = await fetch(callback, { headers: { accept: 'application/json', 'login-binding': binding }, signal: AbortSignal.timeout(TIMEOUT_MS) });
  const body = (await session.json()) as { sessionToken?: string; error?: { message?: string } };
  if (!session.ok || !body.sessionToken)
    throw new Error(`expected a session from the gateway's callback, got HTTP ${session.status}: ${body.error?.message ?? ''}`);
  return body.sessionToken;
}
