import type { SandboxClient } from '../context';
import { S256_CHALLENGE_PATTERN } from './pkce';
import { isAllowedRedirectUri } from './redirect-uri';

/** Scopes a data client may ask for at the bank page; the token still carries `info accounts` (docs/provider-choices.md). */
export const KNOWN_USER_SCOPES = ['info', 'accounts', 'balance', 'cards', 'transactions', 'direct_debits', 'standing_orders', 'offline_access'];

export const AUTHORIZE_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method'] as const;

export interface AuthorizeRequest {
  clientId: string;
  redirectUri: string;
  scope: string | undefined;
  state: string | undefined;
  codeChallenge: string | undefined;
  codeChallengeMethod: string | undefined;
}

/**
 * `fatal`: the client or redirect URI cannot be trusted, so the bank must show an error itself and never redirect
 * (RFC 6749 §4.1.2.1). `redirect`: the redirect URI is trusted, so the error goes back to the client on it.
 */
export type AuthorizeCheck =
  | { kind: 'ok'; request: AuthorizeRequest }
  | { kind: 'fatal'; message: string }
  | { kind: 'redirect'; redirectUri: string; state: string | undefined; error: string; description: string };

export function checkAuthorizeRequest(params: URLSearchParams, client: SandboxClient): AuthorizeCheck {
  const clientIds = params.getAll('client_id');
  if (clientIds.length !== 1 || clientIds[0] === '') return { kind: 'fatal', message: 'client_id is required, once.' };
  if (clientIds[0] !== client.clientId) return { kind: 'fatal', message: `client_id ${JSON.stringify(clientIds[0])} is not a registered application.` };
  const redirectUris = params.getAll('redirect_uri');
  if (redirectUris.length !== 1 || redirectUris[0] === '') return { kind: 'fatal', message: 'redirect_uri is required, once.' };
  const redirectUri = redirectUris[0]!;
  if (!isAllowedRedirectUri(redirectUri, client.redirectUris)) {
    return { kind: 'fatal', message: `redirect_uri ${JSON.stringify(redirectUri)} is not allow-listed for this application.` };
  }

  const state = params.get('state') ?? undefined;
  const fail = (error: string, description: string): AuthorizeCheck => ({ kind: 'redirect', redirectUri, state, error, description });
  const repeated = AUTHORIZE_PARAMS.find((name) => params.getAll(name).length > 1);
  if (repeated) return fail('invalid_request', `${repeated} was sent more than once`);
  const responseType = params.get('response_type');
  if (!responseType) return fail('invalid_request', 'response_type is required; use code');
  if (responseType !== 'code') return fail('unsupported_response_type', `response_type ${responseType} is not supported; use code`);

  const scope = params.get('scope') ?? undefined;
  const unknownScopes = (scope ?? '').split(' ').filter((s) => s !== '' && !KNOWN_USER_SCOPES.includes(s));
  if (unknownScopes.length > 0) return fail('invalid_scope', `unknown scope ${unknownScopes.join(' ')}; accepted: ${KNOWN_USER_SCOPES.join(' ')}`);

  const codeChallenge = params.get('code_challenge') ?? undefined;
  const codeChallengeMethod = params.get('code_challenge_method') ?? undefined;
  if (codeChallenge === undefined && codeChallengeMethod !== undefined) {
    return fail('invalid_request', 'code_challenge_method was sent without a code_challenge');
  }
  if (codeChallenge !== undefined) {
    if (codeChallengeMethod !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256 (plain is not accepted)');
    if (!S256_CHALLENGE_PATTERN.test(codeChallenge)) {
      return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the verifier: 43 characters of A-Z a-z 0-9 - _');
    }
  }
  return { kind: 'ok', request: { clientId: clientIds[0]!, redirectUri, scope, state, codeChallenge, codeChallengeMethod } };
}

/** The redirect back to the client, keeping any query the registered redirect URI has. */
export function redirectLocation(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.append(name, value);
  return url.href;
}
