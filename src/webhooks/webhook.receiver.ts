import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendError, sendJson } from '../platform/http/respond';
import { PayloadTooLargeError, readBody } from '../platform/http/body';
import type { Logger } from '../platform/observability/logger';
import type { ReceivedWebhook, WebhookVerifier } from './webhook-verifier';
import type { Span, Telemetry } from '../platform/observability/telemetry';
import type { EventInbox } from './event-inbox';

/** One signed delivery, as a handler sees it. */
export interface WebhookDelivery {
  /** What follows a prefix route's path (a data task's token); empty for an exact route. */
  key: string;
  /** The body, a JSON object. */
  body: Record<string, unknown>;
  requestId: string;
  receivedAt: Date;
}

/** A handler's refusal of a delivery, answered as it says. */
export interface WebhookRefusal {
  status: 400 | 404 | 503;
  code: 'BAD_USER_INPUT' | 'NOT_FOUND' | 'INTERNAL_SERVER_ERROR';
  message: string;
}

/**
 * What a handler made of a delivery: an event (recorded in the inbox under its id, once; `after` runs after the
 * answer, for the delivery that recorded it only), nothing to do (202), or a refusal.
 */
export type WebhookDecision = { event: { id: string; type: string }; after?: () => Promise<void> } | { ignored: true } | WebhookRefusal;

export type WebhookHandler = (delivery: WebhookDelivery) => Promise<WebhookDecision>;

/** Where a feature's webhooks arrive, given to the receiver by the composition root. */
export interface WebhookRoute {
  /** Names the route's deliveries in the inbox, metrics, logs and spans (`payments`, `data`). */
  source: string;
  /** The exact path, or with `prefix` the path's beginning (its rest is the delivery's `key`). */
  path: string;
  prefix?: boolean;
  handler: WebhookHandler;
}

export type WebhookOutcome =
  { status: 200; result: 'accepted'; after?: () => Promise<void> } | { status: 200; result: 'duplicate' } | { status: 202; result: 'ignored' } | WebhookRefusal;

export interface WebhookStats {
  accepted: number;
  duplicate: number;
  ignored: number;
  refused: Record<string, number>;
  published: number;
  publishFailed: number;
}

export interface WebhookReceiverDeps {
  verifier: WebhookVerifier;
  /** Every accepted event, once: only the delivery that records an event runs its `after`. */
  inbox: EventInbox;
  routes: readonly WebhookRoute[];
  /** The path prefix the provider signs in front of the path received here (PUBLIC_URL's path behind a proxy). */
  publicPathPrefix: () => string;
  logger: Logger;
  /** WEBHOOK_MAX_BODY_BYTES: webhook bodies are a few hundred bytes; anything near this is not from the provider. */
  maxBodyBytes: number;
  /** For /metrics: every delivery's source (`payments`, `data`) and outcome (`accepted`, `refused_401`, …). */
  onOutcome?: (source: string, outcome: string) => void;
  /** Spans: `webhook received` (this whole route), `webhook stored` (the handler), `webhook published` (after answering). */
  telemetry?: Telemetry;
  now?: () => number;
}

/**
 * The routes features register (`POST /webhooks/payments` and `POST /webhooks/data/:token`, docs/provider-choices.md,
 * "Webhooks and subscriptions in the gateway"), in this order: the body is read up to WEBHOOK_MAX_BODY_BYTES (413
 * beyond); Tl-Signature is verified over the raw bytes (401, or 503 when the provider's keys cannot be fetched); the
 * body must be a JSON object (400); then the route's handler validates the fields (400), knows the key (404),
 * ignores unknown kinds (202) or names the event, which is stored in the inbox (200, `accepted` or `duplicate`).
 * Publishing happens after the answer has been sent, so a slow subscriber path never makes the provider time out
 * and retry.
 */
export class WebhookReceiver {
  readonly stats: WebhookStats = { accepted: 0, duplicate: 0, ignored: 0, refused: {}, published: 0, publishFailed: 0 };

  /** The inbox of accepted events ("did that event arrive?"). */
  readonly inbox: EventInbox;
  private readonly pending = new Set<Promise<void>>();
  private readonly maxBodyBytes: number;
  private readonly telemetry: Telemetry | undefined;

  constructor(private readonly deps: WebhookReceiverDeps) {
    this.inbox = deps.inbox;
    this.maxBodyBytes = deps.maxBodyBytes;
    this.telemetry = deps.telemetry;
  }

  /** True when `path` is a webhook route (and the request has been answered). */
  async handle(req: IncomingMessage, res: ServerResponse, path: string, requestId: string): Promise<boolean> {
    const route = this.deps.routes.find((candidate) => (candidate.prefix ? path.startsWith(candidate.path) : path === candidate.path));
    if (!route) return false;
    const { source } = route;
    if (!this.telemetry?.enabled) return this.receive(req, res, path, requestId, route, undefined);
    return this.telemetry.span('webhook received', { attributes: { 'bankgraph.webhook.source': source, 'bankgraph.request_id': requestId } }, (span) =>
      this.receive(req, res, path, requestId, route, span),
    );
  }

  private async receive(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    requestId: string,
    route: WebhookRoute,
    span: Span | undefined,
  ): Promise<true> {
    const { source } = route;
    const log = this.deps.logger.child({ requestId, webhook: source });
    const refuse = (status: number, code: string, message: string, headers: Record<string, string> = {}): true => {
      span?.setAttribute('bankgraph.webhook.outcome', `refused_${status}`);
      this.stats.refused[status] = (this.stats.refused[status] ?? 0) + 1;
      this.deps.onOutcome?.(source, `refused_${status}`);
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

    const received: ReceivedWebhook = { path: this.deps.publicPathPrefix() + path, headers: req.headers, body };
    const verdict = await this.deps.verifier.verify(received);
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
      const delivery: WebhookDelivery = { key: route.prefix ? path.slice(route.path.length) : '', body: fields, requestId, receivedAt: new Date(this.now()) };
      const store = (): Promise<WebhookOutcome> => this.record(route, delivery);
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
    this.deps.onOutcome?.(source, outcome.result);
    span?.setAttribute('bankgraph.webhook.outcome', outcome.result);
    sendJson(res, outcome.status, { status: outcome.result });
    const after = outcome.result === 'accepted' ? outcome.after : undefined;
    const telemetry = this.telemetry;
    if (after) this.track(telemetry ? () => telemetry.span('webhook published', {}, after) : after, log);
    return true;
  }

  /** The handler's decision; an event is claimed in the inbox, so only its first delivery is `accepted`. */
  private async record(route: WebhookRoute, delivery: WebhookDelivery): Promise<WebhookOutcome> {
    const decision = await route.handler(delivery);
    if ('ignored' in decision) return { status: 202, result: 'ignored' };
    if (!('event' in decision)) return decision;
    const { id: eventId, type } = decision.event;
    const claimed = await this.deps.inbox.claim({ source: route.source, eventId, type, receivedAt: delivery.receivedAt.toISOString(), body: delivery.body });
    return claimed ? { status: 200, result: 'accepted', after: decision.after } : { status: 200, result: 'duplicate' };
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
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
