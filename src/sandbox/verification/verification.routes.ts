import type { RouteModule, SandboxContext } from '../context';
import type { FixtureAccount, FixtureUser } from '../fixtures/types';
import type { SandboxRequest } from '../http/request';
import { Problem, sendJson } from '../http/respond';
import { isAuthFailure } from '../tokens';
import { hasLetter, isVerified, matchScore } from './name-match';

const REQUIRED_SCOPES = ['info', 'accounts'];
const MAX_NAME_LENGTH = 140;

/** `POST {verification_url}/v1/verification` (a trailing slash is fine: the router ignores it). */
export const registerVerificationRoutes: RouteModule = ({ provider }, context) => {
  provider.add('POST', '/v1/verification', (req, res) => {
    const user = authenticatedUser(req, context);
    const name = submittedName(req);
    const report = user.accounts.map((account) => accountReport(account, name));
    const holders = report.flatMap((entry) => entry.account_holders);
    sendJson(res, 200, {
      verified: holders.some((holder) => holder.verified),
      account_holder_name: name,
      match_score: Math.max(0, ...holders.map((holder) => holder.match_score)),
      report,
    });
  });
};

function authenticatedUser(req: SandboxRequest, context: SandboxContext): FixtureUser {
  const token = context.tokens.authenticate(req, REQUIRED_SCOPES, 'user');
  if (isAuthFailure(token)) {
    if (token.kind === 'scope') throw new Problem(403, 'forbidden', `${token.detail}; verification needs a user token with scopes info and accounts`);
    throw new Problem(401, 'unauthenticated', token.detail);
  }
  const user = context.fixtures.users.find((candidate) => candidate.id === token.userId);
  if (!user) throw new Problem(401, 'unauthenticated', 'the access token belongs to no known user');
  return user;
}

function submittedName(req: SandboxRequest): string {
  // Malformed JSON and a wrong content type are turned into 400 invalid-parameters by the kernel.
  const body = req.json();
  const invalid = (message: string): Problem => new Problem(400, 'invalid-parameters', `name: ${message}`, { name: [message] });
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new Problem(400, 'invalid-parameters', 'the body must be a JSON object: {"name": "<account holder name>"}', { name: ['is required'] });
  }
  const name = (body as Record<string, unknown>).name;
  if (name === undefined || name === null) throw invalid('is required');
  if (typeof name !== 'string') throw invalid(`must be a string, got ${Array.isArray(name) ? 'array' : typeof name}`);
  if (name.trim() === '') throw invalid('must not be empty');
  if (name.length > MAX_NAME_LENGTH) throw invalid(`must be at most ${MAX_NAME_LENGTH} characters`);
  if (!hasLetter(name)) throw invalid('must contain at least one letter');
  return name;
}

function accountReport(account: FixtureAccount, name: string) {
  const { account: details } = account;
  return {
    verifiable: true,
    currency: details.currency,
    provider_id: details.provider.provider_id,
    // The data API's TRANSACTION is what verification calls CURRENT.
    account_type: details.account_type === 'TRANSACTION' ? 'CURRENT' : details.account_type,
    account_holders: account.holders.map((holder) => {
      const score = matchScore(name, holder);
      return { name: holder, verified: isVerified(score), match_score: score };
    }),
    display_name: details.display_name,
    iban: details.account_number.iban,
    swift_bic: details.account_number.swift_bic,
    account_number: details.account_number.number,
    sort_code: details.account_number.sort_code,
  };
}
