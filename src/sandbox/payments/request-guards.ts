import type { SandboxContext } from '../context';
import type { SandboxRequest } from '../http/request';
import { Problem } from '../http/respond';
import { verifyJws } from '../signing';
import { isAuthFailure, type AccessToken } from '../tokens';

/**
 * The checks every v1 payout and v3 payments call starts with, answering in problem+json: the table in docs/provider-choices.md
 * fixes 401 `unauthenticated` for a missing, unknown or expired token and 403 `forbidden` for a token that may
 * not call the endpoint (wrong scope, or a user's token where the application's is needed).
 */
export function requireApplicationToken(context: SandboxContext, req: SandboxRequest, scope: string): AccessToken {
  const result = context.tokens.authenticate(req, [scope], 'application');
  if (!isAuthFailure(result)) return result;
  if (result.kind === 'scope') {
    throw new Problem(403, 'forbidden', `${result.detail} (this endpoint takes a client-credentials token with the scope ${scope}).`);
  }
  throw new Problem(401, 'unauthenticated', result.detail, undefined, { 'www-authenticate': 'Bearer' });
}

/**
 * Verifies the request signature in `headerName` over the request exactly as received (method, path, the headers
 * named in tl_headers, the raw body bytes), against the client's registered public keys.
 * `mustSign` names headers the signature has to cover, so that e.g. an Idempotency-Key cannot be swapped in transit.
 */
export function requireSignature(context: SandboxContext, req: SandboxRequest, headerName: string, mustSign: string[] = []): void {
  const result = verifyJws(
    req.header(headerName),
    { method: req.method, path: req.path, headers: req.headers, body: req.rawBody },
    (kid) => context.client.signingKeys.get(kid),
    mustSign,
  );
  if (!result.ok) {
    throw new Problem(
      401,
      'invalid-signature',
      `${headerName}: ${result.reason}. Sign the request with TrueLayer request signing v2 (ES512, detached payload) using a key registered with the provider.`,
    );
  }
}
