import { createPublicKey } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Sandbox } from '../../src/sandbox/sandbox';
import { verifyJws, type VerifyResult } from '../../src/sandbox/signing';

export interface ReceivedWebhook {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  body: any;
}

export interface WebhookListener {
  /** e.g. http://127.0.0.1:40123/hooks; deliveries to any path are accepted. */
  url: string;
  received: ReceivedWebhook[];
  /** The next delivery not yet taken by next(), waiting up to timeoutMs for it. */
  next(timeoutMs?: number): Promise<ReceivedWebhook>;
  /** The status answered to deliveries from now on (204 by default), e.g. 500 to make the sandbox retry. */
  respondWith(status: number): void;
  close(): Promise<void>;
}

/** An HTTP server on port 0 that records webhook deliveries; close it in afterEach/afterAll. */
export async function startWebhookListener(path = '/hooks'): Promise<WebhookListener> {
  const received: ReceivedWebhook[] = [];
  const waiters: ((webhook: ReceivedWebhook) => void)[] = [];
  let taken = 0;
  let status = 204;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = JSON.parse(rawBody.toString('utf8'));
      } catch {
        body = undefined;
      }
      const webhook = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, rawBody, body };
      received.push(webhook);
      res.writeHead(status).end();
      const waiter = waiters.shift();
      if (waiter) {
        taken += 1;
        waiter(webhook);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    next(timeoutMs = 5_000) {
      if (taken < received.length) return Promise.resolve(received[taken++]!);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(settle), 1);
          reject(new Error(`no webhook arrived within ${timeoutMs} ms (received so far: ${received.length})`));
        }, timeoutMs);
        const settle = (webhook: ReceivedWebhook): void => {
          clearTimeout(timer);
          resolve(webhook);
        };
        waiters.push(settle);
      });
    },
    respondWith(next) {
      status = next;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Checks a delivery's Tl-Signature as a receiver must: the JWS header's jku must be the sandbox's JWKS address, the
 * key is fetched from there by kid, and the signature must cover POST <path>, X-Tl-Webhook-Timestamp and the body.
 */
export async function verifyWebhookSignature(sandbox: Sandbox, webhook: ReceivedWebhook): Promise<VerifyResult & { jku?: string }> {
  const jwksUrl = `${sandbox.url}/.well-known/jwks`;
  const signature = header(webhook.headers, 'tl-signature');
  const jwsHeader = signature ? (JSON.parse(Buffer.from(signature.split('.')[0]!, 'base64url').toString('utf8')) as { jku?: string }) : {};
  if (jwsHeader.jku !== jwksUrl) return { ok: false, reason: `jku ${String(jwsHeader.jku)} is not the sandbox's ${jwksUrl}` };
  const jwks = (await (await fetch(jwksUrl)).json()) as { keys: (Record<string, unknown> & { kid: string })[] };
  const result = verifyJws(
    signature,
    { method: 'POST', path: new URL(webhook.path, 'http://receiver').pathname, headers: webhook.headers, body: webhook.rawBody },
    (kid) => {
      const jwk = jwks.keys.find((key) => key.kid === kid);
      return jwk ? createPublicKey({ key: jwk as never, format: 'jwk' }) : undefined;
    },
    ['X-Tl-Webhook-Timestamp'],
  );
  return { ...result, jku: jwsHeader.jku };
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
