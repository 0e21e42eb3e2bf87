import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendError, sendJson } from '../platform/http/respond';
import { PayloadTooLargeError, readBody } from '../platform/http/body';
import type { Logger } from '../platform/observability/logger';
import type { ReceivedWebhook, WebhookVerifier } from './webhook-verifier';
import type { Span, Telemetry } from '../platform/observability/telemetry';

/** Webhook bodies are a few hundred bytes; anything near this is not from the provider. */
export const MAX_WEBHOOK_BODY_BYTES = 64 * 1024;

export const PAYMENTS_WEBHOOK_PATH = '/webhooks/payments';
export const DATA_WEBHOOK_PREFIX = '/webhooks/data/';

/** What a handler decided: the HTTP answer, and work to do after answering (publishing). */
export type WebhookOutcome =
  | { status: 200; result: 'accepted'; after?: () => Promise<void> }
  | { status: 200; result: 'duplicate' }
  | { status: 202; result: 'ignored' }
  | { status: 400 | 404 | 503; code: 'BAD_USER_INPUT' | 'NOT_FOUND' | 'INTERNAL_SERVER_ERROR'; message: string };

export interface WebhookHandlers {
  payments(body: Record<string, unknown>, requestId: string): Promise<WebhookOutcome>;
  data(token: string, body: Record<string, unknown>, requestId: string): Promise<WebhookOutcome>;
}

export interface WebhookStats {
  accepted: number;
  duplicate: number;
  ignored: number;
  refused: Record<string, number>;
  published: number;
  publishFailed: number;
}

/**
 * `POST /webhooks/payments` and `POST /webhooks/data/:token` (docs/provider-choices.md, "Webhooks and subscriptions in the gateway"), in this
 * order: the body is read up to MAX_WEBHOOK_BODY_BYTES (413 beyond); Tl-Signature is verified over the raw bytes
 * (401, or 503 when the provider's keys cannot be fetched); the body must be a JSON object (400); then the
 * handler validates the fields (400), knows the task token (404), ignores unknown kinds (202), and stores the
 * event in the inbox (200, `accepted` or `duplicate`). Publishing happens after the answer has been sent, so a
 * slow subscriber path never makes the provider time out and retry.
 */
export class WebhookReceiver {
  readonly stats: WebhookStats = { accepted: 0, duplicate: 0, ignored: 0, refused: {}, published: 0, publishFailed: 0 };
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly verifier: WebhookVerifier,
    private readonly handlers: WebhookHandlers,
    private readonly publicPathPrefix: () => string,
    private readonly logger: Logger,
    private readonly maxBodyBytes = MAX_WEBHOOK_BODY_BYTES,
    /** For /metrics: every delivery's source (`payments`, `data`) and outcome (`accepted`, `refused_401`, …). */
    private readonly onOutcome: (source: string, outcome: string) => void = () => undefined,
    /** Spans: `webhook received` (this whole route), `webhook stored` (the handler), `webhook published` (after answering). */
    private readonly telemetry?: Telemetry,
  ) {}

  /** True when `path` is a webhook route (and the request has been answered). */
  async handle(req: IncomingMessage, res: ServerResponse, path: string, requestId: string): Promise<boolean> {
    const isPayments = path === PAYMENTS_WEBHOOK_PATH;
    if (!isPayments && !path.startsWith(DATA_WEBHOOK_PREFIX)) return false;
    const source = isPayments ? 'payments' : 'data';
    if (!this.telemetry?.enabled) return this.receive(req, res, path, requestId, source, undefined);
    return this.telemetry.span('webhook received', { attributes: { 'bankgraph.webhook.source': source, 'bankgraph.request_id': requestId } }, (span) =>
      this.receive(req, res, path, requestId, source, span),
    );
  }

  private async receive(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    requestId: string,
    source: 'payments' | 'data',
    span: Span | undefined,
  ): Promise<true> {
    const isPayments = source === 'payments';
    const log = this.logger.child({ requestId, webhook: source });
    const refuse = (status: number, code: string, message: string, headers: Record<string, string> = {}): true => {
      span?.setAttribute('bankgraph.webhook.outcome', `refused_${status}`);
      this.stats.refused[status] = (this.stats.refused[status] ?? 0) + 1;
      this.onOutcome(source, `refused_${status}`);
      log.warn({ status, reason: message }, 'webhook refused');
      sendError(res, status, code, message, requestId, headers);
      return true;
    };

    if (req.method !== 'POST') return refuse(405, 'BAD_USER_INPUT', 'Webhooks are delivered with POST.', { allow: 'POST' });
    let body: Buffer;
    try {
      body = await readBody(req, this.maxBodyBytes);
    } catch (error) {
      if (error instanceof PayloadTooLargeError) {
        // The rest of an oversized body is not read; closing the connection stops the sender from pushing it.
        res.setHeader('connection', 'close');
        return refuse(413, 'BAD_USER_INPUT', `The webhook body exceeds ${this.maxBodyBytes} bytes.`);
      }
      throw error;
    }

    const received: ReceivedWebhook = { path: this.publicPathPrefix() + path, headers: req.headers, body };
    const verdict = await this.verifier.verify(received);
    if (!verdict.ok)
      return refuse(verdict.status, verdict.status === 401 ? 'UNAUTHENTICATED' : 'UPSTREAM_UNAVAILABLE', `Webhook signature rejected: ${verdict.reason}.`);

    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return refuse(400, 'BAD_USER_INPUT', 'The webhook body is not valid JSON.');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return refuse(400, 'BAD_USER_INPUT', 'The webhook body must be a JSON object.');
    const fields = parsed as Record<string, unknown>;

    let outcome: WebhookOutcome;
    try {
      const store = (): Promise<WebhookOutcome> =>
        isPayments ? this.handlers.payments(fields, requestId) : this.handlers.data(path.slice(DATA_WEBHOOK_PREFIX.length), fields, requestId);
      outcome = this.telemetry ? await this.telemetry.span('webhook stored', {}, store) : await store();
    } catch (error) {
      // The store (inbox, task records) failed: not acknowledged, so the provider delivers it again later.
      log.error({ err: error }, 'webhook could not be recorded');
      return refuse(503, 'INTERNAL_SERVER_ERROR', 'The webhook could not be recorded; deliver it again later.');
    }
    if ('code' in outcome) return refuse(outcome.status, outcome.code, outcome.message);

    if (outcome.result === 'ignored') this.stats.ignored += 1;
    else if (outcome.result === 'duplicate') this.stats.duplicate += 1;
    else this.stats.accepted += 1;
    this.onOutcome(source, outcome.result);
    span?.setAttribute('bankgraph.webhook.outcome', outcome.result);
    sendJson(res, outcome.status, { status: outcome.result });
    const after = outcome.result === 'accepted' ? outcome.after : undefined;
    const telemetry = this.telemetry;
    if (after) this.track(telemetry ? () => telemetry.span('webhook published', {}, after) : after, log);
    return true;
  }

  /** Resolves when the work queued after answering (publishing) has finished; for shutdown and tests. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private track(after: () => Promise<void>, log: Logger): void {
    const work = after().then(
      () => {
        this.stats.published += 1;
      },
      (error: unknown) => {
        this.stats.publishFailed += 1;
        log.error({ err: error }, 'an accepted webhook could not be published; subscribers see it when they next read the state');
      },
    );
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }
}
