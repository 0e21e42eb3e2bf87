import { parseLoginForm } from '../../src/sandbox/auth/bank-form.reader';

export interface StartedSignIn {
  /** The /auth/login answer: its status, and where it sent the browser. */
  status: number;
  bankPage?: string;
  binding?: string;
  /** The login cookie (`bankgraph_login=...`), as a browser would send it back. */
  loginCookie?: string;
  body?: string;
}

/** GET /auth/login as a browser or app does, without following the redirect. */
export async function startSignIn(gatewayUrl: string, query: string, headers: Record<string, string> = {}): Promise<StartedSignIn> {
  const response = await fetch(`${gatewayUrl}/auth/login${query}`, { redirect: 'manual', headers });
  const cookie = response.headers.getSetCookie().find((value) => value.startsWith('bankgraph_login='));
  return {
    status: response.status,
    bankPage: response.headers.get('location') ?? undefined,
    binding: response.headers.get('login-binding') ?? undefined,
    loginCookie: cookie?.split(';')[0],
    body: await response.text(),
  };
}

/** Fills in the bank's form (allow or cancel) and returns the bank's redirect back to the gateway's callback. */
export async function answerBankPage(
  bankPage: string,
  login: { username: string; password: string; bank?: string },
  action: 'allow' | 'deny' = 'allow',
): Promise<string> {
  const page = await fetch(bankPage);
  const { action: formAction, fields } = parseLoginForm(await page.text(), bankPage);
  const submitted = await fetch(formAction, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      ...fields,
      ...(login.bank ? { bank: login.bank } : {}),
      username: login.username,
      password: login.password,
      action,
    }).toString(),
  });
  const callback = submitted.headers.get('location');
  if (submitted.status !== 302 || !callback) throw new Error(`expected the bank to redirect back, got ${submitted.status}`);
  return callback;
}
