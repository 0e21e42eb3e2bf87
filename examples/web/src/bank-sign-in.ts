import { appAddress, GATEWAY_URL } from './config';

const BINDING = 'bankgraph.loginBinding';
const ANSWER = ['code', 'state', 'error'];

// #region json-sign-in
/** The JSON sign-in: the gateway says where the bank is and gives this tab a binding, kept until the bank sends the person back. */
export async function startBankSignIn(): Promise<void> {
  const answer = await fetch(`${GATEWAY_URL}/auth/login?response=json&returnTo=${encodeURIComponent(appAddress())}`, {
    headers: { accept: 'application/json' },
  });
  if (!answer.ok) throw new Error(((await answer.json()) as { error?: { message?: string } }).error?.message ?? `HTTP ${answer.status}`);
  const { authorizationUrl, loginBinding } = (await answer.json()) as { authorizationUrl: string; loginBinding: string };
  sessionStorage.setItem(BINDING, loginBinding);
  window.location.assign(authorizationUrl);
}

/** Back from the bank (`?code=…&state=…` on this page): the gateway's answer to the code and this tab's binding is the session token. */
async function finish(): Promise<string | undefined> {
  const here = new URL(window.location.href);
  const binding = sessionStorage.getItem(BINDING);
  if (!here.searchParams.has('state') || binding === null) return undefined;
  const callback = new URLSearchParams();
  for (const name of ANSWER) if (here.searchParams.has(name)) callback.set(name, here.searchParams.get(name)!);
  // The code works once: it leaves the address bar and the binding leaves storage whatever the answer.
  for (const name of ANSWER) here.searchParams.delete(name);
  window.history.replaceState(null, '', here.href);
  sessionStorage.removeItem(BINDING);
  const done = await fetch(`${GATEWAY_URL}/auth/callback?${callback}`, { headers: { accept: 'application/json', 'login-binding': binding } });
  const body = (await done.json()) as { sessionToken?: string; error?: { message?: string } };
  if (!done.ok || body.sessionToken === undefined) throw new Error(body.error?.message ?? `The sign-in failed (HTTP ${done.status}).`);
  return body.sessionToken;
}
// #endregion json-sign-in

let finishing: Promise<string | undefined> | undefined;

/** Finishes a JSON sign-in this page came back from, once per page load however often it is asked. */
export function finishBankSignIn(): Promise<string | undefined> {
  finishing ??= finish();
  return finishing;
}
