import { createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A test identity provider: a JWKS at `${url}/jwks` with one ES256 key, and a signer for tokens under it. */
export interface TestIdp {
  url: string;
  jwksUrl: string;
  issuer: string;
  /** A JWS with the given claims; `kid` and `alg` may be overridden, `key` signs with another key. */
  sign(claims: Record<string, unknown>, options?: { kid?: string; key?: KeyObject; typ?: string }): string;
  /** An unsigned token (`alg: none`), as an attacker would send one. */
  unsigned(claims: Record<string, unknown>): string;
  close(): Promise<void>;
}

export async function startTestIdp(): Promise<TestIdp> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'test-key-1', alg: 'ES256', use: 'sig' };
  const server: Server = createServer((req, res) => {
    if (req.url !== '/jwks') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  return {
    url,
    jwksUrl: `${url}/jwks`,
    issuer: `${url}/`,
    sign(claims, options = {}) {
      const input = `${encode({ alg: 'ES256', typ: options.typ ?? 'JWT', kid: options.kid ?? jwk.kid })}.${encode(claims)}`;
      const signature = createSign('SHA256')
        .update(input)
        .sign({ key: options.key ?? privateKey, dsaEncoding: 'ieee-p1363' });
      return `${input}.${signature.toString('base64url')}`;
    },
    unsigned(claims) {
      return `${encode({ alg: 'none', typ: 'JWT' })}.${encode(claims)}.`;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
