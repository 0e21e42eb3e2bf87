import type { SandboxContext } from '../context';
import type { FixtureUser } from '../fixtures/types';
import type { SandboxRequest } from '../http/request';
import { OAuthStyleError } from '../http/respond';
import { isAuthFailure, type AccessToken } from '../tokens';

const REQUIRED_SCOPES = ['accounts'];

/** The data API reads one user's bank data, so it needs that user's token with the accounts scope (RFC 6750 errors). */
export function dataApiUser(req: SandboxRequest, context: SandboxContext): { token: AccessToken; user: FixtureUser } {
  const token = context.tokens.authenticate(req, REQUIRED_SCOPES, 'user');
  if (isAuthFailure(token)) {
    if (token.kind === 'scope') {
      throw new OAuthStyleError(403, 'insufficient_scope', `${token.detail}; the data API needs a user token with the accounts scope`, {
        'www-authenticate': 'Bearer error="insufficient_scope", scope="accounts"',
      });
    }
    throw new OAuthStyleError(401, 'invalid_token', token.detail, { 'www-authenticate': 'Bearer error="invalid_token"' });
  }
  const user = context.fixtures.users.find((candidate) => candidate.id === token.userId);
  if (!user) throw new OAuthStyleError(401, 'invalid_token', 'the access token belongs to no known user');
  return { token, user };
}
