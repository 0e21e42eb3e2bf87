import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';

/**
 * TrueLayer request signing v2 (see docs/provider-choices.md): a compact JWS, ES512, with the payload detached.
 * The sandbox verifies clients' requests with it and signs its own webhooks with it.
 */
export interface SignedParts {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer | string;
}

interface JwsHeader {
  alg: string;
  kid: string;
  tl_version?: string;
  tl_headers?: string;
  jku?: string;
}

const b64url = (data: Buffer | string): string => Buffer.from(data).toString('base64url');

function headerValue(headers: SignedParts['headers'], name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === lower) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

function signingPayload(parts: SignedParts, signedHeaders: string[]): Buffer {
  const lines = [`${parts.method.toUpperCase()} ${parts.path}\n`];
  for (const name of signedHeaders) lines.push(`${name}: ${headerValue(parts.headers, name) ?? ''}\n`);
  return Buffer.concat([Buffer.from(lines.join('')), Buffer.from(parts.body)]);
}

export function signJws(parts: SignedParts, key: { kid: string; privateKey: KeyObject; jku?: string; signedHeaders?: string[] }): string {
  const signedHeaders = key.signedHeaders ?? [];
  const header: JwsHeader = { alg: 'ES512', kid: key.kid, tl_version: '2', tl_headers: signedHeaders.join(',') };
  if (key.jku) header.jku = key.jku;
  const encodedHeader = b64url(JSON.stringify(header));
  const input = `${encodedHeader}.${b64url(signingPayload(parts, signedHeaders))}`;
  const signature = sign('sha512', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${encodedHeader}..${b64url(signature)}`;
}

export type VerifyResult = { ok: true; header: JwsHeader } | { ok: false; reason: string };

/**
 * Checks a detached JWS against the request as received; `keyFor` finds the public key for the header's kid.
 * `mustSign` names headers the signature has to cover (e.g. Idempotency-Key), so they cannot be swapped in transit.
 */
export function verifyJws(jws: string | undefined, parts: SignedParts, keyFor: (kid: string) => KeyObject | undefined, mustSign: string[] = []): VerifyResult {
  if (!jws) return { ok: false, reason: 'the signature header is missing' };
  const pieces = jws.split('.');
  if (pieces.length !== 3 || pieces[1] !== '') return { ok: false, reason: 'the signature is not a detached compact JWS (header..signature)' };
  let header: JwsHeader;
  try {
    header = JSON.parse(Buffer.from(pieces[0]!, 'base64url').toString('utf8')) as JwsHeader;
  } catch {
    return { ok: false, reason: 'the JWS header is not base64url-encoded JSON' };
  }
  // Valid JSON is not necessarily an object (`null`, `1`); reading fields off it must not throw.
  if (typeof header !== 'object' || header === null || Array.isArray(header)) {
    return { ok: false, reason: 'the JWS header must be a JSON object' };
  }
  if (header.tl_headers !== undefined && typeof header.tl_headers !== 'string') {
    return { ok: false, reason: 'tl_headers must be a comma-separated string of header names' };
  }
  if (header.alg !== 'ES512') return { ok: false, reason: `alg must be ES512, got ${String(header.alg)}` };
  if (header.tl_version !== '2') return { ok: false, reason: `tl_version must be "2", got ${String(header.tl_version)}` };
  const key = typeof header.kid === 'string' ? keyFor(header.kid) : undefined;
  if (!key) return { ok: false, reason: `no public key is registered for kid ${JSON.stringify(header.kid)}` };
  const signedHeaders = header.tl_headers
    ? header.tl_headers
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean)
    : [];
  const covered = new Set(signedHeaders.map((name) => name.toLowerCase()));
  const uncovered = mustSign.filter((name) => !covered.has(name.toLowerCase()));
  if (uncovered.length > 0) return { ok: false, reason: `tl_headers must include ${uncovered.join(', ')}` };
  // A key registered for another algorithm (any PEM public key is accepted) makes verify() throw, not fail.
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'secp521r1') {
    return { ok: false, reason: `the key registered for kid ${JSON.stringify(header.kid)} is not an EC P-521 key, which ES512 needs` };
  }
  const input = `${pieces[0]}.${b64url(signingPayload(parts, signedHeaders))}`;
  const valid = verify('sha512', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(pieces[2]!, 'base64url'));
  return valid ? { ok: true, header } : { ok: false, reason: 'the signature does not match the request' };
}

export function generateSigningKey(): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: 'P-521' });
}

export function publicKeyFromPem(pem: string): KeyObject {
  return createPublicKey(pem);
}

export function privateKeyFromPem(pem: string): KeyObject {
  return createPrivateKey(pem);
}

export function toJwk(publicKey: KeyObject, kid: string): Record<string, unknown> {
  return { ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES512', use: 'sig' };
}
