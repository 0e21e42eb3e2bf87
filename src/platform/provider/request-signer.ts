/*
 * TrueLayer request signing v2, as docs/provider-choices.md fixes it: a compact JWS with a detached payload,
 * `base64url(header)..base64url(signature)`, ES512 (ECDSA P-521 over SHA-512, JOSE r‖s form). The payload is
 * `"<METHOD> <path>\n"`, then `"<Name>: <value>\n"` for each header listed in `tl_headers`, then the body bytes
 * exactly as sent; so a signature binds the body to the byte, and the signer must see the bytes that go out.
 * Verification is written for any detached JWS of this kind (requests and webhooks alike).
 */
import { createPrivateKey, sign, verify, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';

export interface SignableRequest {
  method: string;
  /** Path without query, as sent on the wire (percent-encoding included). */
  path: string;
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  body: Uint8Array | string;
}

export type SigningKey = { keyId: string; privateKeyPem: string } | { keyId: string; privateKey: KeyObject };

export interface JwsHeader {
  alg: string;
  kid: string;
  tl_version?: string;
  tl_headers?: string;
  jku?: string;
  [other: string]: unknown;
}

export interface SignOptions {
  /** Headers to cover, in order; their names are written into `tl_headers` as given here. */
  signedHeaders?: readonly string[];
  /** The signer's JWKS address, put in the JWS header when signing webhooks. */
  jku?: string;
}

/** r‖s, each a 66-byte P-521 integer. */
const ES512_SIGNATURE_BYTES = 132;

const base64url = (data: Uint8Array | string): string => Buffer.from(data).toString('base64url');

function headerValue(headers: SignableRequest['headers'], name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === lower) return typeof value === 'string' ? value : value?.[0];
  }
  return undefined;
}

/** The detached payload; undefined when a header it must cover is absent, which can never verify. */
function signingPayload(request: SignableRequest, signedHeaders: readonly string[]): Buffer | undefined {
  let prefix = `${request.method.toUpperCase()} ${request.path}\n`;
  for (const name of signedHeaders) {
    const value = headerValue(request.headers, name);
    if (value === undefined) return undefined;
    prefix += `${name}: ${value}\n`;
  }
  return Buffer.concat([Buffer.from(prefix, 'utf8'), Buffer.from(request.body)]);
}

function privateKeyOf(key: SigningKey): KeyObject {
  return 'privateKey' in key ? key.privateKey : createPrivateKey(key.privateKeyPem);
}

export function signRequest(request: SignableRequest, key: SigningKey, options: SignOptions = {}): string {
  const signedHeaders = options.signedHeaders ?? [];
  const header: JwsHeader = {
    alg: 'ES512',
    kid: key.keyId,
    tl_version: '2',
    tl_headers: signedHeaders.join(','),
  };
  if (options.jku !== undefined) header.jku = options.jku;
  const payload = signingPayload(request, signedHeaders);
  if (!payload) throw new Error(`cannot sign: a header listed in tl_headers (${header.tl_headers}) is missing from the request`);
  const encodedHeader = base64url(JSON.stringify(header));
  const signature = sign('sha512', Buffer.from(`${encodedHeader}.${base64url(payload)}`), {
    key: privateKeyOf(key),
    dsaEncoding: 'ieee-p1363',
  });
  return `${encodedHeader}..${base64url(signature)}`;
}

/**
 * Signatures of requests without a body, reused for the same key and the same signed bytes. A P-521 signature is
 * expensive, and opening many subscriptions to one payment signs the same `GET /v3/payments/<id>/refunds` over and
 * over. Any valid signature of those bytes verifies, and one that has been sent is already visible to whoever can
 * see the request, so reusing it gives nothing away. Requests with a body (with their idempotency keys) are signed
 * each time. Entries live a minute, and the map is bounded.
 */
export class SignatureReuse {
  private readonly kept: LRUCache<string, string>;

  constructor(ttlMs = 60_000, now: () => number = Date.now) {
    // ttlResolution 0: expiry reads the given clock itself, never a value cached from it.
    this.kept = new LRUCache({ max: 1_000, ttl: ttlMs, ttlResolution: 0, perf: { now } });
  }

  sign(request: SignableRequest, key: { keyId: string; privateKey: KeyObject }, options: SignOptions = {}): string {
    if (request.body.length > 0) return signRequest(request, key, options);
    const payload = signingPayload(request, options.signedHeaders ?? []);
    if (!payload) return signRequest(request, key, options);
    const id = `${key.keyId}\u0000${options.jku ?? ''}\u0000${(options.signedHeaders ?? []).join(',')}\u0000${payload.toString('utf8')}`;
    const kept = this.kept.get(id);
    if (kept !== undefined) return kept;
    const signature = signRequest(request, key, options);
    this.kept.set(id, signature);
    return signature;
  }
}

/** The JWS header, for picking the key (`kid`, `jku`) before verifying; undefined when it is not one. */
export function decodeJwsHeader(jws: string): JwsHeader | undefined {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts[1] !== '') return undefined;
  try {
    const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as unknown;
    if (typeof header !== 'object' || header === null || Array.isArray(header)) return undefined;
    const { alg, kid } = header as Record<string, unknown>;
    return typeof alg === 'string' && typeof kid === 'string' ? (header as JwsHeader) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * True when `jws` is a v2 detached ES512 signature of this request by `publicKey`. Anything malformed is false,
 * never an exception: the caller answers 401 either way. Which headers must be covered is the caller's policy
 * (read them from `decodeJwsHeader(jws).tl_headers`).
 */
export function verifyRequestSignature(jws: string, request: SignableRequest, publicKey: KeyObject): boolean {
  const header = decodeJwsHeader(jws);
  if (!header || header.alg !== 'ES512' || header.tl_version !== '2') return false;
  const signedHeaders = typeof header.tl_headers === 'string' && header.tl_headers !== '' ? header.tl_headers.split(',').map((n) => n.trim()) : [];
  const payload = signingPayload(request, signedHeaders);
  if (!payload) return false;
  const [encodedHeader, , encodedSignature] = jws.split('.') as [string, string, string];
  // Buffer's base64url decoder skips stray characters; only the canonical encoding of r‖s may verify.
  const signature = Buffer.from(encodedSignature, 'base64url');
  if (signature.length !== ES512_SIGNATURE_BYTES || signature.toString('base64url') !== encodedSignature) return false;
  try {
    return verify('sha512', Buffer.from(`${encodedHeader}.${base64url(payload)}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature);
  } catch {
    return false;
  }
}
