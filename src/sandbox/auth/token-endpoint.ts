import type { ServerResponse } from 'node:http';
import type { SandboxContext } from '../context';
import { OAuthStyleError, sendJson } from '../http/respond';
import type { Handler } from '../http/router';
import { authenticateClient } from './client-auth';
import type { Grants } from './grants';
import { CODE_VERIFIER_PATTERN, s256Challenge } from './pkce';

/** What the client-credentials grant can give (docs/provider-choices.md, "Tokens"); both when no scope is asked for. */
export const APPLICATION_SCOPES = ['paydirect', 'payments'];
const GRANT_TYPES = ['authorization_code', 'client_credentials', 'refresh_token'];

/** `POST {auth_url}/connect/token`, form-encoded; errors are `{error, error_description}` (RFC 6749 §5.2). */
export function tokenEndpoint(context: SandboxContext, grants: Grants): Handler {
  return (req, res) => {
    const form = req.form();
    const repeated = [...new Set(form.keys())].find((name) => form.getAll(name).length > 1);
    if (repeated) throw new OAuthStyleError(400, 'invalid_request', `${repeated} was sent more than once`);
    authenticateClient(req, form, context.client);
    const grantType = form.get('grant_type');
    if (!grantType) throw new OAuthStyleError(400, 'invalid_request', `grant_type is required: one of ${GRANT_TYPES.join(', ')}`);
    const param = (name: string): string => {
      const value = form.get(name);
      if (!value) throw new OAuthStyleError(400, 'invalid_request', `${name} is required with grant_type ${grantType}`);
      return value;
    };
    switch (grantType) {
      case 'authorization_code':
        return sendTokens(res, authorizationCode(grants, context.client.clientId, param('code'), param('redirect_uri'), form.get('code_verifier')));
      case 'refresh_token':
        return sendTokens(res, refreshToken(grants, context.client.clientId, param('refresh_token'), form.get('scope')));
      case 'client_credentials': {
        const scopes = applicationScopes(form.get('scope'));
        return sendTokens(res, context.tokens.issue({ clientId: context.client.clientId, scopes }));
      }
      default:
        throw new OAuthStyleError(400, 'unsupported_grant_type', `grant_type ${grantType} is not supported; use one of ${GRANT_TYPES.join(', ')}`);
    }
  };
}

function authorizationCode(grants: Grants, clientId: string, code: string, redirectUri: string, verifier: string | null): object {
  const invalid = (description: string): OAuthStyleError => new OAuthStyleError(400, 'invalid_grant', description);
  const grant = grants.findCode(code);
  if (!grant || grant.clientId !== clientId) throw invalid('the authorization code is not valid');
  if (grant.sessionId) {
    grants.revokeSession(grant.sessionId);
    throw invalid('the authorization code has already been used; the tokens issued with it are revoked');
  }
  if (grants.isExpired(grant)) throw invalid('the authorization code has expired (codes are valid for 60 seconds)');
  if (grant.redirectUri !== redirectUri) throw invalid('redirect_uri differs from the one sent to the authorization page');
  if (grant.codeChallenge === undefined) {
    // A verifier with no challenge means someone stripped the challenge on the way in (a PKCE downgrade).
    if (verifier !== null) throw invalid('code_verifier was sent but the authorization request had no code_challenge');
  } else {
    if (verifier === null || verifier === '') throw invalid('code_verifier is required: the authorization request sent a code_challenge');
    if (!CODE_VERIFIER_PATTERN.test(verifier)) throw invalid('code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
    if (s256Challenge(verifier) !== grant.codeChallenge) throw invalid('code_verifier does not match the code_challenge');
  }
  return grants.redeemCode(grant);
}

function refreshToken(grants: Grants, clientId: string, token: string, scope: string | null): object {
  const refresh = grants.findRefreshToken(token);
  if (!refresh || refresh.clientId !== clientId) throw new OAuthStyleError(400, 'invalid_grant', 'the refresh token is not valid');
  if (refresh.revoked) {
    throw new OAuthStyleError(400, 'invalid_grant', 'the refresh token has been revoked: refresh tokens rotate, so each one works once');
  }
  // RFC 6749 §6: a refresh may narrow the scope, never widen it.
  let accessScopes = refresh.scopes;
  if (scope !== null) {
    const asked = scope.split(' ').filter((s) => s !== '');
    const extra = asked.filter((s) => !refresh.scopes.includes(s));
    if (asked.length === 0 || extra.length > 0) {
      throw new OAuthStyleError(400, 'invalid_scope', `scope must be a non-empty subset of the granted scopes: ${refresh.scopes.join(' ')}`);
    }
    accessScopes = refresh.scopes.filter((s) => asked.includes(s));
  }
  return grants.rotate(token, accessScopes);
}

function applicationScopes(scope: string | null): string[] {
  if (scope === null) return [...APPLICATION_SCOPES];
  const asked = [...new Set(scope.split(' ').filter((s) => s !== ''))];
  const unknown = asked.filter((s) => !APPLICATION_SCOPES.includes(s));
  if (asked.length === 0 || unknown.length > 0) {
    throw new OAuthStyleError(
      400,
      'invalid_scope',
      `${asked.length === 0 ? 'scope is empty' : `unknown scope ${unknown.join(' ')}`}; the client-credentials grant accepts ${APPLICATION_SCOPES.join(' and ')}`,
    );
  }
  return APPLICATION_SCOPES.filter((s) => asked.includes(s));
}

/** Token responses must not be cached anywhere (RFC 6749 §5.1). */
function sendTokens(res: ServerResponse, body: object): void {
  sendJson(res, 200, body, { 'cache-control': 'no-store', pragma: 'no-cache' });
}
