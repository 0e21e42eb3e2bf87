import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateSigningKey, signJws, toJwk } from '../../src/sandbox/signing';
import type { KeyObject } from 'node:crypto';

/** A JWKS endpoint of the test's own, serving webhook-signing keys and counting how often it is fetched. */
export interface TestJwks {
  url: string;
  kid: string;
  privateKey: KeyObject;
  fetches: number;
  /** Publishes another key (rotation); returns its kid and private key. */
  addKey(kid: string): { kid: string; privateKey: KeyObject };
  close(): Promise<void>;
}

export async function startTestJwks(kid = 'test-webhooks-1'): Promise<TestJwks> {
  const keys = new Map<string, { privateKey: KeyObject; publicKey: KeyObject }>();
  const first = generateSigningKey();
  keys.set(kid, first);
  const server = createServer((_req, res) => {
    jwks.fetches += 1;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [...keys].map(([id, key]) => toJwk(key.publicKey, id)) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const jwks: TestJwks = {
    url: `http://127.0.0.1:${port}/.well-known/jwks`,
    kid,
    privateKey: first.privateKey,
    fetches: 0,
    addKey(newKid) {
      const key = generateSigningKey();
      keys.set(newKid, key);
      return { kid: newKid, privateKey: key.privateKey };
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return jwks;
}

export interface SignedDelivery {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

export interface SignOptions {
  jku: string;
  kid: string;
  privateKey: KeyObject;
  /** Default: now. */
  timestamp?: string;
  /** Headers covered by the signature; default X-Tl-Webhook-Timestamp, as the provider signs. */
  signedHeaders?: string[];
}

/** A webhook delivery signed as the provider signs them (README, "Webhooks"), to the exact URL given. */
export function signedDelivery(url: string, body: string | Buffer, options: SignOptions): SignedDelivery {
  const bytes = Buffer.from(body);
  const timestamp = options.timestamp ?? new Date().toISOString();
  const signature = signJws(
    { method: 'POST', path: new URL(url).pathname, headers: { 'X-Tl-Webhook-Timestamp': timestamp }, body: bytes },
    { kid: options.kid, privateKey: options.privateKey, jku: options.jku, signedHeaders: options.signedHeaders ?? ['X-Tl-Webhook-Timestamp'] },
  );
  return { url, body: bytes, headers: { 'content-type': 'application/json', 'x-tl-webhook-timestamp': timestamp, 'tl-signature': signature } };
}

/** POSTs a delivery byte for byte; the status and parsed body of the answer. */
export async function post(delivery: SignedDelivery): Promise<{ status: number; body: any }> {
  const response = await fetch(delivery.url, { method: 'POST', headers: delivery.headers, body: delivery.body });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, body };
}
