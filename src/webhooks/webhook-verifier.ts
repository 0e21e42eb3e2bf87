import type { IncomingHttpHeaders } from 'node:http';
import { decodeJwsHeader, verifyRequestSignature } from '../platform/provider/request-signer';
import { JwksUnavailableError, type JwksKeyCache } from './jwks-cache';

export const TIMESTAMP_HEADER = 'X-Tl-Webhook-Timestamp';
export const SIGNATURE_HEADER = 'Tl-Signature';

export type WebhookVerdict = { ok: true; jku: string; kid: string } | { ok: false; status: 401 | 503; reason: string };

export interface WebhookVerifierOptions {
  /** A delivery whose signed timestamp is further than this from now (either way) is refused. */
  maxSkewMs: number;
  now?: () => number;
}

export interface ReceivedWebhook {
  /** The path the provider posted to, as it signed it (the public URL's path, see WebhookReceiver). */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * Checks `Tl-Signature` as docs/provider-choices.md, "Webhooks", fixes it: a v2 detached ES512 JWS whose header names the provider's
 * JWKS (`jku`, which must be on the allow-list exactly) and `kid`, covering `POST <path>`, the
 * X-Tl-Webhook-Timestamp header and the raw body. The timestamp must be covered and recent, so a captured delivery
 * cannot be replayed later; within the window, the inbox's event-id deduplication makes a replay harmless.
 */
export class WebhookVerifier {
  private readonly maxSkewMs: number;
  private readonly now: () => number;

  constructor(
    private readonly keys: JwksKeyCache,
    options: WebhookVerifierOptions,
  ) {
    this.maxSkewMs = options.maxSkewMs;
    this.now = options.now ?? Date.now;
  }

  async verify(webhook: ReceivedWebhook): Promise<WebhookVerdict> {
    const signature = single(webhook.headers[SIGNATURE_HEADER.toLowerCase()]);
    if (!signature) return refuse(`the ${SIGNATURE_HEADER} header is missing`);
    const header = decodeJwsHeader(signature);
    if (!header) return refuse(`${SIGNATURE_HEADER} is not a detached compact JWS`);
    if (header.alg !== 'ES512' || header.tl_version !== '2') return refuse('the signature must be ES512, tl_version 2');
    if (typeof header.jku !== 'string' || !this.keys.isAllowed(header.jku)) return refuse('the signature names a JWKS (jku) that is not on the allow-list');
    const covered = typeof header.tl_headers === 'string' ? header.tl_headers.split(',').map((name) => name.trim().toLowerCase()) : [];
    if (!covered.includes(TIMESTAMP_HEADER.toLowerCase())) return refuse(`the signature must cover ${TIMESTAMP_HEADER}`);
    const timestamp = single(webhook.headers[TIMESTAMP_HEADER.toLowerCase()]);
    const sentAt = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
    if (Number.isNaN(sentAt)) return refuse(`the ${TIMESTAMP_HEADER} header is missing or not a date-time`);
    if (Math.abs(this.now() - sentAt) > this.maxSkewMs) return refuse(`the ${TIMESTAMP_HEADER} is outside the accepted window (a replay, or a skewed clock)`);

    let key;
    try {
      key = await this.keys.keyFor(header.jku, header.kid);
    } catch (error) {
      if (error instanceof JwksUnavailableError) return { ok: false, status: 503, reason: 'the provider’s signing keys could not be fetched; retry later' };
      throw error;
    }
    if (!key) return refuse('no key with the signature’s kid is published at its jku');
    const valid = verifyRequestSignature(signature, { method: 'POST', path: webhook.path, headers: webhook.headers, body: webhook.body }, key);
    return valid ? { ok: true, jku: header.jku, kid: header.kid } : refuse('the signature does not match the delivery');
  }
}

function refuse(reason: string): WebhookVerdict {
  return { ok: false, status: 401, reason };
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
