import type { IncomingHttpHeaders } from 'node:http';
import { readCookie, SESSION_COOKIE } from '../access/session-cookie';

/** Sent as the close reason (at most 123 bytes), so a developer sees why and what to do instead. */
export const FOREIGN_ORIGIN_REASON = 'Cookie refused from this Origin: list it in CORS_ORIGINS (or ALLOWED_ORIGINS), or use connectionParams.authorization';

/**
 * Cross-site WebSocket hijacking: browsers send the session cookie with a WebSocket upgrade from any page and the
 * upgrade is not subject to CORS, so a page on evil.example could act as the signed-in user. A connection that
 * would authenticate by cookie is accepted only from the gateway's own origin (its PUBLIC_URL, or the Host it was
 * reached at) or one listed in CORS_ORIGINS, the list CORS reads too, so one setting admits an app on every
 * transport. A connection that sends `connectionParams.authorization` proves itself with a token no other page can
 * read, and one without an Origin header is not a browser: both unaffected.
 */
export class WebSocketOriginPolicy {
  private readonly allowed: ReadonlySet<string>;

  constructor(
    allowedOrigins: readonly string[],
    private readonly publicUrl: () => string | undefined,
  ) {
    this.allowed = new Set(allowedOrigins.map((origin) => new URL(origin).origin));
  }

  /** False when this connection would sign in with the session cookie from an origin that may not. */
  admits(headers: Pick<IncomingHttpHeaders, 'cookie' | 'origin' | 'host'>, connectionParams: Readonly<Record<string, unknown>> | undefined): boolean {
    const authorization = connectionParams?.authorization;
    if (typeof authorization === 'string' && authorization !== '') return true;
    if (readCookie(headers.cookie, SESSION_COOKIE) === undefined) return true;
    const origin = headers.origin;
    if (origin === undefined) return true;
    return this.isOwnOrAllowed(origin, headers.host);
  }

  /**
   * For an HTTP stream (SSE, multipart) that would sign in with the session cookie. Beside a foreign Origin, as for a
   * WebSocket, what the browser says made the request (Sec-Fetch-*, which no page can set): sent without CORS (an
   * `<img>`, a `<script>`), from another site, or from a page of the same site with no Origin to check. A request
   * with neither header nor Origin is not a browser's and is served; so is one with a bearer token.
   */
  streamRefusal(headers: IncomingHttpHeaders): 'FOREIGN_ORIGIN' | 'CROSS_SITE_REQUEST' | undefined {
    const { authorization, origin } = headers;
    if ((typeof authorization === 'string' && authorization !== '') || readCookie(headers.cookie, SESSION_COOKIE) === undefined) return undefined;
    const mode = String(headers['sec-fetch-mode'] ?? '').toLowerCase();
    const site = String(headers['sec-fetch-site'] ?? '').toLowerCase();
    if (mode === 'no-cors' || site === 'cross-site' || (site === 'same-site' && origin === undefined)) return 'CROSS_SITE_REQUEST';
    return origin === undefined || this.isOwnOrAllowed(origin, headers.host) ? undefined : 'FOREIGN_ORIGIN';
  }

  private isOwnOrAllowed(origin: string, host: string | undefined): boolean {
    let parsed: URL;
    try {
      parsed = new URL(origin);
    } catch {
      return false;
    }
    if (this.allowed.has(parsed.origin)) return true;
    const publicUrl = this.publicUrl();
    if (publicUrl !== undefined && new URL(publicUrl).origin === parsed.origin) return true;
    return host !== undefined && parsed.host === host.toLowerCase();
  }
}
