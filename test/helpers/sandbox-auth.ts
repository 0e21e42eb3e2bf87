import { createHash, randomBytes } from 'node:crypto';
import type { Sandbox } from '../../src/sandbox/sandbox';
import { parseLoginForm } from '../../src/sandbox/auth/bank-form.reader';

/** Loopback, so any port matches the sandbox's allow-listed http://localhost/auth/callback. */
export const TEST_REDIRECT_URI = 'http://localhost:3999/auth/callback';

export interface TokenResponse {
  access_token: string;
  expires_in: number;
  token_type: string;
  scope: string;
  /** Authorization-code and refresh grants only. */
  refresh_token?: string;
}

export interface Login {
  username: string;
  password: string;
  /** The bank picked on the page (a provider id); the page's default when omitted. */
  bank?: string;
}

export interface SignInOptions {
  redirectUri?: string;
  state?: string;
  scope?: string;
  /** A PKCE S256 challenge to send; see pkcePair(). */
  codeChallenge?: string;
}

export interface SignInResult {
  /** The bank's answer to the form post: 302 on success, 401 for a wrong login, 400 for a refused request. */
  status: number;
  /** The Location header of a 302. */
  location?: string;
  /** `code` and `state` read from the Location, when present. */
  code?: string;
  state?: string;
  /** The HTML, when the bank answered with a page rather than a redirect. */
  html?: string;
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The bank page's address for an authorization request, as a client would redirect a browser to it. */
export function authorizeUrl(sandbox: Sandbox, options: SignInOptions = {}): string {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: sandbox.context.client.clientId,
    redirect_uri: options.redirectUri ?? TEST_REDIRECT_URI,
    scope: options.scope ?? 'info accounts',
    state: options.state ?? randomBytes(8).toString('hex'),
  });
  if (options.codeChallenge) {
    query.set('code_challenge', options.codeChallenge);
    query.set('code_challenge_method', 'S256');
  }
  return `${sandbox.url}/?${query}`;
}

/** Does what a browser does: opens the bank page, fills in the login form, posts it; never follows the redirect. */
export async function signIn(sandbox: Sandbox, login: Login, options: SignInOptions = {}): Promise<SignInResult> {
  const pageUrl = authorizeUrl(sandbox, options);
  const page = await fetch(pageUrl, { redirect: 'manual' });
  const pageHtml = await page.text();
  if (page.status !== 200) return { status: page.status, location: page.headers.get('location') ?? undefined, html: pageHtml };
  const { action, fields } = parseLoginForm(pageHtml, pageUrl);
  const response = await fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...fields, ...(login.bank ? { bank: login.bank } : {}), username: login.username, password: login.password }).toString(),
  });
  const location = response.headers.get('location') ?? undefined;
  const html = await response.text();
  if (!location) return { status: response.status, html };
  const params = new URL(location).searchParams;
  return { status: response.status, location, code: params.get('code') ?? undefined, state: params.get('state') ?? undefined };
}

/**
 * A raw token endpoint call. The client's credentials are added to the body unless `fields` sets them (set one to
 * '' to leave it out) or `basicAuth` sends them as HTTP Basic instead.
 */
export async function tokenRequest(sandbox: Sandbox, fields: Record<string, string>, options: { basicAuth?: boolean } = {}): Promise<Response> {
  const { clientId, clientSecret } = sandbox.context.client;
  const body = new URLSearchParams();
  const all: Record<string, string> = options.basicAuth ? { ...fields } : { client_id: clientId, client_secret: clientSecret, ...fields };
  for (const [name, value] of Object.entries(all)) if (value !== '') body.set(name, value);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (options.basicAuth) headers.authorization = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
  return fetch(`${sandbox.url}/connect/token`, { method: 'POST', headers, body: body.toString() });
}

/** Exchanges an authorization code (authorization_code grant). */
export function exchangeCode(sandbox: Sandbox, code: string, options: { redirectUri?: string; codeVerifier?: string } = {}): Promise<Response> {
  const fields: Record<string, string> = { grant_type: 'authorization_code', code, redirect_uri: options.redirectUri ?? TEST_REDIRECT_URI };
  if (options.codeVerifier !== undefined) fields.code_verifier = options.codeVerifier;
  return tokenRequest(sandbox, fields);
}

/** Signs a seeded user in through the bank form (with PKCE) and exchanges the code: an end-user token with refresh token. */
export async function getUserToken(sandbox: Sandbox, login: Login = { username: 'john', password: 'doe' }): Promise<TokenResponse & { refresh_token: string }> {
  const { verifier, challenge } = pkcePair();
  const signedIn = await signIn(sandbox, login, { codeChallenge: challenge });
  if (signedIn.status !== 302 || !signedIn.code) throw new Error(`bank sign-in as ${login.username} failed: HTTP ${signedIn.status}`);
  return expectTokens(await exchangeCode(sandbox, signedIn.code, { codeVerifier: verifier })) as Promise<TokenResponse & { refresh_token: string }>;
}

/** An application token (client_credentials grant); `scope` e.g. 'paydirect' or 'payments', both when omitted. */
export async function getAppToken(sandbox: Sandbox, scope?: string): Promise<TokenResponse> {
  return expectTokens(await tokenRequest(sandbox, { grant_type: 'client_credentials', ...(scope === undefined ? {} : { scope }) }));
}

/** The refresh_token grant: a new access token and a new refresh token (the old one stops working). */
export async function refreshUserToken(sandbox: Sandbox, refreshToken: string): Promise<TokenResponse & { refresh_token: string }> {
  return expectTokens(await tokenRequest(sandbox, { grant_type: 'refresh_token', refresh_token: refreshToken })) as Promise<
    TokenResponse & { refresh_token: string }
  >;
}

export function bearer(token: string | TokenResponse): Record<string, string> {
  return { authorization: `Bearer ${typeof token === 'string' ? token : token.access_token}` };
}

async function expectTokens(response: Response): Promise<TokenResponse> {
  const text = await response.text();
  if (response.status !== 200) throw new Error(`token endpoint answered ${response.status}: ${text}`);
  return JSON.parse(text) as TokenResponse;
}
