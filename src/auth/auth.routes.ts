import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthClient } from '../datasources/auth.client';
import type { DataClient } from '../datasources/data.client';
import { BadUserInputError, GatewayError, UnauthenticatedError } from '../errors';
import { redirect, sendError, sendJson } from '../http/respond';
import type { Logger } from '../logger';
import type { LoginStateStore } from '../store/login-state.store';
import type { SessionStore } from '../store/session.store';
import { SESSION_TTL_MS } from '../store/session.store';
import { createPkcePair, randomState } from './pkce';
import { readCookie, SESSION_COOKIE } from './principal';
import { tokensFrom } from './user-token.provider';
import { userIdFromAccounts } from './user-identity';

export interface AuthRoutesDeps {
  authUrl: string;
  clientId: string;
  /** This gateway's public address; the callback URL is derived from it. */
  publicUrl: () => string;
  loginStates: LoginStateStore;
  sessions: SessionStore;
  auth: AuthClient;
  data: DataClient;
  logger: Logger;
}

/** The scopes the bank is asked for (docs/provider-choices.md: the authorization-code grant gives `info accounts`). */
const USER_SCOPES = 'info accounts';

/**
 * The end-user sign-in (backend-for-frontend): the gateway runs the provider's authorization-code flow with
 * state and PKCE, keeps the provider tokens, and hands the app only its own session token.
 */
export async function handleAuthRoute(path: string, req: IncomingMessage, res: ServerResponse, requestId: string, deps: AuthRoutesDeps): Promise<boolean> {
  const url = new URL(req.url ?? '/', 'http://gateway');
  const route = `${req.method} ${path}`;
  try {
    if (route === 'GET /auth/login') await login(url, res, deps);
    else if (route === 'GET /auth/callback') await callback(url, req, res, requestId, deps);
    else if (route === 'POST /auth/logout') await logout(req, res, deps);
    else if (path === '/auth/login' || path === '/auth/callback' || path === '/auth/logout') {
      sendError(res, 405, 'BAD_USER_INPUT', `${req.method} is not allowed on ${path}`, requestId);
    } else return false;
  } catch (error) {
    const known = error instanceof GatewayError ? error : undefined;
    if (!known) deps.logger.error({ err: error, requestId, route }, 'sign-in failed');
    const status = known?.code === 'UNAUTHENTICATED' ? 401 : known?.code === 'BAD_USER_INPUT' ? 400 : 502;
    sendError(res, status, known?.code ?? 'UPSTREAM_ERROR', known?.message ?? 'Signing in with the bank failed; try again.', requestId);
  }
  return true;
}

async function login(url: URL, res: ServerResponse, deps: AuthRoutesDeps): Promise<void> {
  const returnTo = url.searchParams.get('returnTo') ?? undefined;
  // Only same-origin paths: an open redirect after sign-in would hand phishers a trusted link.
  if (returnTo !== undefined && !/^\/(?![/\\])/.test(returnTo)) {
    throw new BadUserInputError('returnTo must be a path on this gateway, such as /graphql', 'returnTo');
  }
  const response = url.searchParams.get('response') ?? 'cookie';
  if (response !== 'cookie' && response !== 'json') throw new BadUserInputError('response must be "cookie" or "json"', 'response');
  const state = randomState();
  const { verifier, challenge } = createPkcePair();
  await deps.loginStates.put(state, { codeVerifier: verifier, returnTo, responseMode: response, createdAt: new Date().toISOString() });
  const authorize = new URL(`${deps.authUrl}/`);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: deps.clientId,
    redirect_uri: callbackUrl(deps),
    scope: USER_SCOPES,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  redirect(res, authorize.toString());
}

async function callback(url: URL, req: IncomingMessage, res: ServerResponse, requestId: string, deps: AuthRoutesDeps): Promise<void> {
  const state = url.searchParams.get('state');
  const loginState = state ? await deps.loginStates.take(state) : undefined;
  if (!loginState) throw new UnauthenticatedError('The sign-in link is unknown, used or expired; start again at /auth/login.');
  const bankError = url.searchParams.get('error');
  if (bankError) throw new UnauthenticatedError(`The bank did not sign you in (${bankError.slice(0, 64)}); start again at /auth/login.`);
  const code = url.searchParams.get('code');
  if (!code) throw new UnauthenticatedError('The bank sent no authorization code; start again at /auth/login.');

  const tokens = tokensFrom(await deps.auth.exchangeCode({ code, redirectUri: callbackUrl(deps), codeVerifier: loginState.codeVerifier }, { requestId }));
  const accounts = await deps.data.accounts({ token: async () => tokens.accessToken }, { requestId });
  const session = await deps.sessions.create(userIdFromAccounts(accounts), tokens);

  if (loginState.responseMode === 'json' || wantsJson(req)) {
    sendJson(res, 200, session);
    return;
  }
  const secure = deps.publicUrl().startsWith('https:') ? '; Secure' : '';
  const cookie = `${SESSION_COOKIE}=${encodeURIComponent(session.sessionToken)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${SESSION_TTL_MS / 1000}${secure}`;
  redirect(res, loginState.returnTo ?? '/graphql', { 'set-cookie': cookie });
}

async function logout(req: IncomingMessage, res: ServerResponse, deps: AuthRoutesDeps): Promise<void> {
  const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
  const token = bearer ?? readCookie(req.headers.cookie, SESSION_COOKIE);
  if (token) await deps.sessions.delete(token);
  res.writeHead(204, { 'set-cookie': `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`, 'cache-control': 'no-store' });
  res.end();
}

function callbackUrl(deps: AuthRoutesDeps): string {
  return `${deps.publicUrl()}/auth/callback`;
}

/** Apps ask for JSON (`Accept: application/json`); a browser following the bank's redirect asks for HTML. */
function wantsJson(req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

