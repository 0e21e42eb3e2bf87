import type { SandboxContext } from '../context';
import type { FixtureUser } from '../fixtures/types';
import type { SandboxRequest } from '../http/request';
import { OAuthStyleError } from '../http/respond';
import { isAuthFailure, type AccessToken } from '../tokens';

/**
 * The data API reads one user's bank data, so it needs that user's token with the scope of what is read (RFC 6750
 * errors): `accounts` for accounts, cards and what is in them, `info` for who the user is (GET /data/v1/info).
 */
export function dataApiUser(req: SandboxRequest, context: SandboxContext, scope: 'accounts' | 'info' = 'accounts'): { token: AccessToken; user: FixtureUser } {
  const token = context.tokens.authenticate(req, [scope], 'user');
  if (isAuthFailure(token)) {
    if (token.kind === 'scope') {
      throw new OAuthStyleError(403, 'insufficient_scope', `${token.detail}; this data API call needs a user token with the ${scope} scope`, {
        'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"`,
      });
    }
    throw new OAuthStyleError(401, 'invalid_token', token.detail, { 'www-authenticate': 'Bearer error="invalid_token"' });
  }
  const user = context.fixtures.users.find((candidate) => candidate.id === token.userId);
  if (!user) throw new OAuthStyleError(401, 'invalid_token', 'the access token belongs to no known user');
  return { token, user };
}
