import type { Database } from '../platform/db/database';
import type { Logger } from '../platform/observability/logger';
import type { Telemetry } from '../platform/observability/telemetry';
import { EventInbox } from './event-inbox';
import { JwksKeyCache } from './jwks-cache';
import { WebhookVerifier } from './webhook-verifier';
import { WebhookReceiver, type WebhookRoute } from './webhook.receiver';

export interface WebhookSettings {
  maxBodyBytes: number;
  /** How far a webhook's signed timestamp may be from now. */
  maxSkewMs: number;
  jwksMinRefetchIntervalMs: number;
  /** WEBHOOK_JWKS_URLS: the only JWKS addresses signing keys are fetched from. */
  jwksUrls: readonly string[];
}

export interface WebhookSetup {
  /** The webhook inbox lives in the relational store, whose primary key holds across every instance sharing it. */
  database: Database;
  settings: WebhookSettings;
  /** Reads a JWKS (an allowed address) from the provider. */
  fetchJwks(url: string): Promise<unknown>;
  /** The features' routes and handlers. */
  routes: readonly WebhookRoute[];
  /** The gateway's public URL when known: the provider signs that URL's path. */
  publicUrl(): string | undefined;
  logger: Logger;
  onOutcome?: (source: string, outcome: string) => void;
  telemetry?: Telemetry;
  /** Epoch ms: signed timestamps, key refetches and the inbox are timed on it. */
  clock: () => number;
}

/** The webhook receiver with its verifier, key cache and inbox. */
export function createWebhookReceiver(setup: WebhookSetup): WebhookReceiver {
  const { settings, clock } = setup;
  const jwks = new JwksKeyCache(settings.jwksUrls, setup.fetchJwks, { minRefetchIntervalMs: settings.jwksMinRefetchIntervalMs });
  return new WebhookReceiver({
    verifier: new WebhookVerifier(jwks, { maxSkewMs: settings.maxSkewMs, now: clock }),
    inbox: new EventInbox(setup.database, clock),
    routes: setup.routes,
    // The provider signs the path of the URL it posts to; behind a proxy that strips PUBLIC_URL's path, that
    // path is PUBLIC_URL's path followed by the one received here.
    publicPathPrefix: () => {
      const publicUrl = setup.publicUrl();
      return publicUrl ? new URL(publicUrl).pathname.replace(/\/+$/, '') : '';
    },
    logger: setup.logger,
    maxBodyBytes: settings.maxBodyBytes,
    onOutcome: setup.onOutcome,
    telemetry: setup.telemetry,
    now: clock,
  });
}
