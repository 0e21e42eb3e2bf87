import type { KeyObject } from 'node:crypto';
import { generateSigningKey, signJws } from '../../src/sandbox/signing';

/**
 * Request signing for sandbox contract tests: a P-521 key the test registers with the sandbox
 * (`createSandbox({ signingKeys: [registration(key)] })`), and signatures made with the sandbox's own signJws,
 * so a test can sign exactly the bytes it sends (or deliberately not).
 */
export interface TestSigningKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicKeyPem: string;
}

export function createTestSigningKey(kid = 'test-signing-key'): TestSigningKey {
  const { privateKey, publicKey } = generateSigningKey();
  return { kid, privateKey, publicKey, publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString() };
}

/** What `createSandbox({ signingKeys })` takes for this key. */
export function registration(key: TestSigningKey): { kid: string; publicKeyPem: string } {
  return { kid: key.kid, publicKeyPem: key.publicKeyPem };
}

export interface RequestToSign {
  method: string;
  /** Path without query, as sent. */
  path: string;
  headers?: Record<string, string>;
  /** The exact body bytes sent; '' for none. */
  body?: string | Buffer;
}

/** A detached JWS (`header..signature`) over the request, covering `signedHeaders` in that order. */
export function signRequest(key: TestSigningKey, request: RequestToSign, signedHeaders: string[] = []): string {
  return signJws(
    { method: request.method, path: request.path, headers: request.headers ?? {}, body: request.body ?? '' },
    { kid: key.kid, privateKey: key.privateKey, signedHeaders },
  );
}

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: T;
}

export interface SandboxCall {
  method: string;
  path: string;
  /** Bearer token; no Authorization header when omitted. */
  token?: string;
  /** An object is sent as JSON (Content-Type application/json); a string or Buffer is sent byte for byte. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Signs the call and puts the signature in this header (X-SVC-Signature for payouts, Svc-Signature for refunds). */
  sign?: { key: TestSigningKey; header: string; signedHeaders?: string[] };
}

/** One HTTP call to the sandbox, signed over exactly the bytes it sends when `sign` is given. */
export async function callSandbox<T = any>(baseUrl: string, call: SandboxCall): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...(call.headers ?? {}) };
  let body: string | Buffer | undefined;
  if (call.body !== undefined) {
    body = typeof call.body === 'string' || Buffer.isBuffer(call.body) ? call.body : JSON.stringify(call.body);
    if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
  }
  if (call.token !== undefined) headers.Authorization = `Bearer ${call.token}`;
  if (call.sign) {
    headers[call.sign.header] = signRequest(
      call.sign.key,
      { method: call.method, path: call.path.split('?')[0]!, headers, body: body ?? '' },
      call.sign.signedHeaders,
    );
  }
  return send<T>(baseUrl, call.method, call.path, headers, body);
}

/** A raw call: nothing added, nothing signed. */
export async function send<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<HttpResult<T>> {
  const response = await fetch(baseUrl + path, { method, headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, text, body: parsed as T };
}
