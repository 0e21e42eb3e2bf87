import { randomUUID, type KeyObject } from 'node:crypto';
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { signJws } from './signing';

export interface WebhookDelivery {
  id: string;
  url: string;
  body: unknown;
  attempts: number;
  /** The last HTTP status received, or the connection error. */
  lastResult?: number | string;
  delivered: boolean;
}

/** Real-time backoff between attempts (docs/provider-choices.md: 1 s, 2 s, 4 s, 8 s); tests may shorten it. */
const DEFAULT_RETRY_DELAYS_MS = [1000, 2000, 4000, 8000];

/** Signs and POSTs webhooks, retrying until a 2xx; keeps a log for tests (`GET /sandbox/webhooks`). */
export class WebhookSender {
  private readonly deliveries: WebhookDelivery[] = [];
  private readonly pending = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly key: { kid: string; privateKey: KeyObject },
    private readonly jwksUrl: () => string,
    private readonly retryDelaysMs: number[] = DEFAULT_RETRY_DELAYS_MS,
  ) {}

  send(url: string, body: unknown): WebhookDelivery {
    const delivery: WebhookDelivery = { id: randomUUID(), url, body, attempts: 0, delivered: false };
    this.deliveries.push(delivery);
    this.attempt(delivery).catch((error: unknown) => {
      delivery.lastResult = error instanceof Error ? error.message : String(error);
    });
    return delivery;
  }

  list(): WebhookDelivery[] {
    return [...this.deliveries];
  }

  close(): void {
    this.closed = true;
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
  }

  private async attempt(delivery: WebhookDelivery): Promise<void> {
    if (this.closed) return;
    delivery.attempts += 1;
    const target = new URL(delivery.url);
    const bytes = Buffer.from(JSON.stringify(delivery.body));
    const timestamp = new Date().toISOString();
    const signature = signJws(
      { method: 'POST', path: target.pathname, headers: { 'X-Tl-Webhook-Timestamp': timestamp }, body: bytes },
      { ...this.key, jku: this.jwksUrl(), signedHeaders: ['X-Tl-Webhook-Timestamp'] },
    );
    const result = await post(target, bytes, { 'x-tl-webhook-timestamp': timestamp, 'tl-signature': signature });
    delivery.lastResult = result;
    if (typeof result === 'number' && result >= 200 && result < 300) {
      delivery.delivered = true;
      return;
    }
    const delay = this.retryDelaysMs[delivery.attempts - 1];
    if (delay === undefined || this.closed) return;
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      this.attempt(delivery).catch((error: unknown) => {
        delivery.lastResult = error instanceof Error ? error.message : String(error);
      });
    }, delay);
    timer.unref();
    this.pending.add(timer);
  }
}

function post(url: URL, body: Buffer, headers: Record<string, string>): Promise<number | string> {
  return new Promise((resolve) => {
    const send = url.protocol === 'https:' ? httpsRequest : request;
    const req = send(
      url,
      { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'content-length': body.length }, timeout: 10_000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', (error) => resolve(error.message));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (error) => resolve(error.message));
    req.end(body);
  });
}
