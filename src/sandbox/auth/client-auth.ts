import { createHash, timingSafeEqual } from 'node:crypto';
import type { SandboxClient } from '../context';
import type { SandboxRequest } from '../http/request';
import { OAuthStyleError } from '../http/respond';

/**
 * Client authentication at the token endpoint: client_id + client_secret in the form body (docs/provider-choices.md), or
 * HTTP Basic (RFC 6749 §2.3.1), but not both at once.
 */
export function authenticateClient(req: SandboxRequest, form: URLSearchParams, client: SandboxClient): void {
  const basic = parseBasic(req.header('authorization'));
  if (basic === 'malformed') throw new OAuthStyleError(400, 'invalid_request', 'the Authorization header must be "Basic base64(client_id:client_secret)"');
  if (basic && form.has('client_secret')) {
    throw new OAuthStyleError(400, 'invalid_request', 'use one client authentication method: HTTP Basic or client_secret in the body, not both');
  }
  if (basic && form.has('client_id') && form.get('client_id') !== basic.id) {
    throw new OAuthStyleError(400, 'invalid_request', 'client_id in the body differs from the one in HTTP Basic');
  }
  const id = basic ? basic.id : form.get('client_id');
  const secret = basic ? basic.secret : form.get('client_secret');
  // RFC 6749 §5.2: a client that authenticated with Basic is told how to retry.
  const headers: Record<string, string> = basic ? { 'www-authenticate': 'Basic realm="sandbox"' } : {};
  if (!id || !secret) {
    throw new OAuthStyleError(401, 'invalid_client', 'client authentication is missing: send client_id and client_secret in the body (or HTTP Basic)', headers);
  }
  if (id !== client.clientId || !sameSecret(secret, client.clientSecret)) {
    throw new OAuthStyleError(401, 'invalid_client', 'client authentication failed: unknown client_id or wrong client_secret', headers);
  }
}

function parseBasic(header: string | undefined): { id: string; secret: string } | 'malformed' | undefined {
  if (!header || !/^basic\s/i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    // Basic credentials are form-encoded first (RFC 6749 §2.3.1).
    return { id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')), secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')) };
  } catch {
    return 'malformed';
  }
}

/** Compared through fixed-length digests so the time taken says nothing about how much of the secret matched. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string): Buffer => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
