import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthClient } from '../platform/provider/auth.client';
import type { DataClient } from '../platform/provider/data.client';
import { BadUserInputError, ForbiddenError, GatewayError, UnauthenticatedError } from '../platform/errors/gateway-errors';
import { PayloadTooLargeError, readBody } from '../platform/http/body';
import { redirect, sendError, sendJson } from '../platform/http/respond';
import type { ConnectionStore, GrantOutcome, GrantOwner } from './connection.store';
import type { IdentityService } from './identity.service';
import type { Logger } from '../platform/observability/logger';
import type { LoginState, LoginStateStore } from './login-state.store';
import { LOGIN_STATE_TTL_MS } from './login-state.store';
import type { SessionStore } from './session.store';
import { SESSION_TTL_MS } from './session.store';
import { createPkcePair, randomState } from './pkce';
import { credentialsFromHeaders } from '../platform/access/principal';
import { readCookie, SESSION_COOKIE } from '../platform/access/session-cookie';
import type { PrincipalResolver } from './principal';
import { checkReturnTo } from './return-to';
import { reachedOrigin, signInBase } from './sign-in-origin';
import { sendSignInPage } from './sign-in-page';
import { tokensFrom } from './user-token.provider';

export interface AuthRoutesDeps {
  authUrl: string;
  clientId: string;
  /** This gateway's public address; the callback URL is derived from it. */
  publicUrl: () => string;
  /** NODE_ENV=production: PUBLIC_URL alone names the callback, whatever loopback name a request came in on. */
  production: boolean;
  /** CORS_ORIGINS: the apps a sign-in may send the browser back to (an absolute returnTo). */
  appOrigins: ReadonlySet<string>;
  loginStates: LoginStateStore;
  sessions: SessionStore;
  connections: ConnectionStore;
  principals: PrincipalResolver;
  identity: IdentityService;
  auth: AuthClient;
  data: DataClient;
  logger: Logger;
  /** Epoch ms: when the bank's tokens expire is counted from it. */
  clock: () => number;
}

/** The scopes the bank is asked for (docs/provider-choices.md: the authorization-code grant gives `info accounts`). */
const USER_SCOPES = 'info accounts';
/** Holds the login binding in the browser that started a sign-in; sent back only to the callback. */
const LOGIN_COOKIE = 'bankgraph_login';
/** The JSON flow's binding: answered by /auth/login or POST /auth/connections, presented at /auth/callback. */
const LOGIN_BINDING_HEADER = 'login-binding';
const DEFAULT_RETURN_TO = '/graphql';
const CONNECTIONS_BODY_LIMIT = 4_096;

const ROUTES = new Map([
  ['/auth/login', 'GET'],
  ['/auth/callback', 'GET'],
  ['/auth/logout', 'POST'],
  ['/auth/connections', 'POST'],
]);

/**
 * The bank sign-in (backend-for-frontend): the gateway runs the provider's authorization-code flow with state and
 * PKCE, keeps the provider tokens (encrypted) on a bank connection of a durable user, and hands the app only its own
 * session token. A sign-in is bound to the browser or app that started it, so nobody can finish theirs in someone
 * else's browser (login CSRF).
 */
export async function handleAuthRoute(path: string, req: IncomingMessage, res: ServerResponse, requestId: string, deps: AuthRoutesDeps): Promise<boolean> {
  const method = ROUTES.get(path);
  if (method === undefined) return false;
  const url = new URL(req.url ?? '/', 'http://gateway');
  // Where a browser goes back to from an error page: set once the sign-in's own returnTo is known.
  const page = { html: path === '/auth/callback' && !wantsJson(req), back: DEFAULT_RETURN_TO };
  try {
    if (req.method !== method) throw new MethodNotAllowed(`${req.method} is not allowed on ${path}; use ${method}`);
    if (path === '/auth/login') await login(url, req, res, deps);
    else if (path === '/auth/connections') await startConnection(req, res, deps);
    else if (path === '/auth/callback') await callback(url, req, res, page, deps);
    else await logout(req, res, deps);
  } catch (error) {
    const known = error instanceof GatewayError ? error : undefined;
    if (!known && !(error instanceof MethodNotAllowed)) deps.logger.error({ err: error, requestId, path }, 'sign-in failed');
    const status = error instanceof MethodNotAllowed ? 405 : statusOf(known?.code);
    const code = error instanceof MethodNotAllowed ? 'BAD_USER_INPUT' : (known?.code ?? 'UPSTREAM_ERROR');
    const message = known?.message ?? (error instanceof MethodNotAllowed ? error.message : 'Signing in with the bank failed; try again.');
    if (page.html) sendSignInPage(res, status, 'Not signed in', message, page.back);
    else sendError(res, status, code, message, requestId);
  }
  return true;
}

class MethodNotAllowed extends Error {}

function statusOf(code: string | undefined): number {
  if (code === 'UNAUTHENTICATED') return 401;
  if (code === 'BAD_USER_INPUT') return 400;
  if (code === 'FORBIDDEN') return 403;
  return 502;
}

/** Bank identity's sign-in; signed in already, the new bank becomes another connection of the same user. */
async function login(url: URL, req: IncomingMessage, res: ServerResponse, deps: AuthRoutesDeps): Promise<void> {
  if (deps.principals.appIdentity) {
    throw new BadUserInputError("This gateway uses the app's own sign-in: connect a bank with POST /auth/connections and your access token.");
  }
  const given = url.searchParams.get('returnTo');
  const returnTo = given === null ? undefined : checkReturnTo(given, deps.appOrigins);
  const response = url.searchParams.get('response') ?? 'cookie';
  if (response !== 'cookie' && response !== 'json') throw new BadUserInputError('response must be "cookie" or "json"', 'response');
  const principal = await deps.principals.resolve(credentialsFromHeaders(req.headers));
  const userId = principal.kind === 'user' ? principal.userId : undefined;
  const { authorizationUrl, binding } = await begin(req, deps, { returnTo, responseMode: response, userId });
  const headers = { 'set-cookie': loginCookie(deps, binding), [LOGIN_BINDING_HEADER]: binding };
  // A browser app's fetch cannot see a redirect's headers: it is told in JSON where to send the browser.
  if (response === 'json' && wantsJson(req)) sendJson(res, 200, { authorizationUrl, loginBinding: binding }, headers);
  else redirect(res, authorizationUrl, headers);
}

/** Adds a bank to the signed-in user (app identity's only way to connect one): answers where to send the browser. */
async function startConnection(req: IncomingMessage, res: ServerResponse, deps: AuthRoutesDeps): Promise<void> {
  const principal = await deps.principals.resolve({ authorization: req.headers.authorization });
  if (principal.kind !== 'user') {
    throw new UnauthenticatedError(
      principal.kind === 'invalid' ? principal.reason : 'Send "Authorization: Bearer <access token>" of the user who connects a bank.',
    );
  }
  let returnTo: string | undefined;
  let raw: Buffer;
  try {
    raw = await readBody(req, CONNECTIONS_BODY_LIMIT);
  } catch (error) {
    if (error instanceof PayloadTooLargeError) throw new BadUserInputError(`The body must be at most ${CONNECTIONS_BODY_LIMIT} bytes.`);
    throw error;
  }
  if (raw.length > 0) {
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new BadUserInputError('The body must be JSON: {} or { "returnTo": "/path" }.');
    }
    const value = (body as { returnTo?: unknown } | null)?.returnTo;
    if (value !== undefined && typeof value !== 'string')
      throw new BadUserInputError('returnTo must be a string: a path such as /graphql, or a URL on an origin in CORS_ORIGINS.', 'returnTo');
    returnTo = value === undefined ? undefined : checkReturnTo(value, deps.appOrigins);
  }
  const { authorizationUrl, binding } = await begin(req, deps, { returnTo, responseMode: 'json', userId: principal.userId });
  sendJson(res, 200, { authorizationUrl, loginBinding: binding }, { 'set-cookie': loginCookie(deps, binding), [LOGIN_BINDING_HEADER]: binding });
}

async function begin(
  req: IncomingMessage,
  deps: AuthRoutesDeps,
  options: Pick<LoginState, 'returnTo' | 'responseMode' | 'userId'>,
): Promise<{ authorizationUrl: string; binding: string }> {
  const state = randomState();
  const binding = randomBytes(24).toString('base64url');
  const { verifier, challenge } = createPkcePair();
  const publicUrl = deps.publicUrl();
  // Kept with the state: the code exchange must send the bank this very redirect_uri.
  const redirectUri = callbackUrl(signInBase(publicUrl, req.headers.host, deps.production));
  const startedAt = reachedOrigin(publicUrl, req.headers.host);
  await deps.loginStates.put(state, { ...options, codeVerifier: verifier, bindingHash: hash(binding), redirectUri, startedAt });
  const authorize = new URL(`${deps.authUrl}/`);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: deps.clientId,
    redirect_uri: redirectUri,
    scope: USER_SCOPES,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  return { authorizationUrl: authorize.toString(), binding };
}

async function callback(url: URL, req: IncomingMessage, res: ServerResponse, page: { html: boolean; back: string }, deps: AuthRoutesDeps): Promise<void> {
  const state = url.searchParams.get('state');
  if (state && (await handOnToApp(url, req, res, state, deps))) return;
  const loginState = state ? await deps.loginStates.take(state) : undefined;
  if (!loginState) throw new UnauthenticatedError('The sign-in link is unknown, used or expired; start again.');
  page.back = loginState.returnTo ?? DEFAULT_RETURN_TO;
  // An app's connection (app identity) ends where it is opened: JSON to an app, a redirect back for a browser.
  page.html = (deps.principals.appIdentity || loginState.responseMode !== 'json') && !wantsJson(req);
  // Before the code is exchanged: a callback opened outside the browser or app that began it signs nobody in.
  const header = headerValue(req.headers[LOGIN_BINDING_HEADER]);
  const presented = header ?? readCookie(req.headers.cookie, LOGIN_COOKIE);
  if (presented === undefined || !sameHash(hash(presented), loginState.bindingHash)) {
    throw new UnauthenticatedError(header === undefined ? bindingRefusal(loginState, req, deps) : ANOTHER_BROWSER);
  }
  const bankError = url.searchParams.get('error');
  if (bankError === 'access_denied') throw new UnauthenticatedError('You cancelled the sign-in at your bank; nothing was connected.');
  if (bankError) throw new UnauthenticatedError(`The bank did not sign you in (${bankError.slice(0, 64).replace(/[^\w.-]/g, '?')}); start again.`);
  const code = url.searchParams.get('code');
  if (!code) throw new UnauthenticatedError('The bank sent no authorization code; start again.');

  const redirectUri = loginState.redirectUri ?? callbackUrl(deps.publicUrl());
  const tokens = tokensFrom(await deps.auth.exchangeCode({ code, redirectUri, codeVerifier: loginState.codeVerifier }), deps.clock());
  // A grant of its own on the circuit breakers (one user's failing bank must not refuse others' sign-ins); random,
  // as nothing about the sign-in may reach the breakers' logs.
  const bearer = { connectionId: `sign-in:${randomBytes(8).toString('hex')}`, token: async () => tokens.accessToken };
  const [accounts, cards, info] = await Promise.all([deps.data.accounts(bearer), deps.data.cards(bearer), deps.data.info(bearer)]);
  const providerId = accounts[0]?.provider.provider_id ?? cards[0]?.provider.provider_id;
  // With nothing shown there is nothing to recognise the person by next time, and one empty sign-in must never
  // become the same user as another; for an app user such a connection could show nothing either.
  if (providerId === undefined) {
    throw new ForbiddenError(
      'Your bank shared neither accounts nor cards with this sign-in, so it cannot identify you. Sign in again and allow access to at least one account or card.',
    );
  }
  const holderName = info.find((entry) => typeof entry.full_name === 'string')?.full_name;
  const outcome = await deps.connections.addGrant(
    {
      providerId,
      scopes: USER_SCOPES,
      tokens,
      accountIds: accounts.map((account) => account.account_id),
      cardIds: cards.map((card) => card.account_id),
      holderName,
    },
    grantOwner(deps, loginState.userId),
  );
  if (outcome.kind === 'refused') throw new ForbiddenError(REFUSALS[outcome.reason]);
  const connection = outcome;
  await deps.identity.bankConnected(connection.userId, connection.connectionId);
  const clearLogin = `${LOGIN_COOKIE}=; Path=/auth/callback; HttpOnly; SameSite=Lax; Max-Age=0`;
  if (deps.principals.appIdentity) {
    const body = { connection: { id: connection.connectionId, providerId } };
    if (page.html) redirect(res, page.back, { 'set-cookie': clearLogin });
    else sendJson(res, 200, body, { 'set-cookie': clearLogin });
    return;
  }
  const session = await deps.sessions.create(connection.userId);
  if (!page.html) {
    sendJson(res, 200, { ...session, connectionId: connection.connectionId }, { 'set-cookie': clearLogin });
    return;
  }
  const secure = deps.publicUrl().startsWith('https:') ? '; Secure' : '';
  const cookie = `${SESSION_COOKIE}=${encodeURIComponent(session.sessionToken)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${SESSION_TTL_MS / 1000}${secure}`;
  redirect(res, page.back, { 'set-cookie': [cookie, clearLogin] });
}

/**
 * The bank's redirect back, in the browser, of a JSON sign-in whose returnTo is an app's URL: the app on its own
 * origin holds the binding (no cookie of the gateway's reaches a page of another site), so the browser is sent
 * there with the bank's `code`, `state` (or `error`), and the app finishes the sign-in at this callback with its
 * Login-Binding. The code is worth nothing without that binding and the PKCE verifier the gateway keeps.
 */
async function handOnToApp(url: URL, req: IncomingMessage, res: ServerResponse, state: string, deps: AuthRoutesDeps): Promise<boolean> {
  if (wantsJson(req) || req.headers[LOGIN_BINDING_HEADER] !== undefined) return false;
  const pending = await deps.loginStates.peek(state);
  if (pending?.responseMode !== 'json' || pending.returnTo === undefined || pending.returnTo.startsWith('/')) return false;
  const app = new URL(pending.returnTo);
  for (const name of ['code', 'state', 'error']) {
    const value = url.searchParams.get(name);
    if (value !== null) app.searchParams.set(name, value);
  }
  redirect(res, app.href);
  return true;
}

const ANOTHER_BROWSER = 'This sign-in was started in another browser or app, so it cannot be finished here; start again.';

/**
 * Why a browser's callback lacks the binding. A browser keeps the login cookie for the address it was set on, so a
 * callback that comes back to another address (the gateway opened at 127.0.0.1 in production, or at a LAN address,
 * while PUBLIC_URL says localhost) arrives without it: that is said, with the way out. Only where the sign-in was
 * started and where the callback came back tell the two cases apart; a foreign browser on the same address gets
 * the generic refusal.
 */
function bindingRefusal(loginState: LoginState, req: IncomingMessage, deps: AuthRoutesDeps): string {
  const publicUrl = deps.publicUrl();
  const here = reachedOrigin(publicUrl, req.headers.host);
  if (loginState.startedAt === undefined || here === undefined || here === loginState.startedAt) return ANOTHER_BROWSER;
  return (
    `This sign-in was started at ${loginState.startedAt} but came back to ${here}, and a browser sends the sign-in's cookie only to the address ` +
    `that set it, so it cannot be finished here: open the gateway at its PUBLIC_URL (${publicUrl}) or set PUBLIC_URL to the address you use, then start again.`
  );
}

/** Why a bank sign-in was refused after the bank signed the person in (docs/identity.md, "Who a grant belongs to"). */
const REFUSALS: Record<Extract<GrantOutcome, { kind: 'refused' }>['reason'], string> = {
  revoked:
    'This bank login belongs to a user whose access has been revoked, so it cannot sign in, not even as a new user. Only the service that revoked the user can reinstate them.',
  'another-user':
    'This bank login belongs to another user of this app, so it cannot be added to the one signed in here. Sign out first, then sign in with that bank login.',
  'not-shown-to-be-yours':
    "Nothing shows that this bank login is the signed-in user's own (the bank gave another name, or it shares accounts with theirs without showing all of them), so it was not added. If it is someone else's, sign out first and sign in with it; a bank login joins a signed-in user only when its holder name matches theirs and it shares no account with their other logins at that bank.",
};

/** Bank identity decides whose a grant is; in app identity the app has signed its user in already. */
function grantOwner(deps: AuthRoutesDeps, userId: string | null | undefined): GrantOwner {
  if (userId === null || userId === undefined) return { kind: 'recognise' };
  return deps.principals.appIdentity ? { kind: 'app-user', userId } : { kind: 'signed-in', userId };
}

async function logout(req: IncomingMessage, res: ServerResponse, deps: AuthRoutesDeps): Promise<void> {
  const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
  const token = bearer ?? readCookie(req.headers.cookie, SESSION_COOKIE);
  // App identity has no gateway sessions: its logout only clears the cookie.
  if (token && !deps.principals.appIdentity) await deps.identity.logout(token);
  res.writeHead(204, { 'set-cookie': `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`, 'cache-control': 'no-store' });
  res.end();
}

function loginCookie(deps: AuthRoutesDeps, binding: string): string {
  const secure = deps.publicUrl().startsWith('https:') ? '; Secure' : '';
  // Lax: the bank's redirect back is a top-level GET, which carries it; no other site's request does.
  return `${LOGIN_COOKIE}=${binding}; Path=/auth/callback; HttpOnly; SameSite=Lax; Max-Age=${LOGIN_STATE_TTL_MS / 1000}${secure}`;
}

function callbackUrl(base: string): string {
  return `${base}/auth/callback`;
}

function hash(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Apps ask for JSON (`Accept: application/json`); a browser following the bank's redirect asks for HTML. */
function wantsJson(req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}
