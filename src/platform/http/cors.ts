import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../observability/logger';
import { LRUCache } from 'lru-cache';
import { sendError } from './respond';

/** What browser apps send beside the CORS-safelisted headers: GraphQL clients', tracing's and the JSON sign-in's. */
export const CORS_ALLOWED_HEADERS = [
  'content-type',
  'authorization',
  'apollo-require-preflight',
  'x-apollo-operation-name',
  'graphql-client-name',
  'graphql-client-version',
  'apollographql-client-name',
  'apollographql-client-version',
  'traceparent',
  'tracestate',
  'x-request-id',
  'cache-control',
  'login-binding',
] as const;

/** The answer's headers an app reads besides the safelisted ones: the request id, the rate limit's, the sign-in binding. */
export const CORS_EXPOSED_HEADERS = ['x-request-id', 'retry-after', 'login-binding'] as const;

const ALLOWED_METHODS = 'GET, POST';
/** Long enough that an app does not preflight every operation, short enough that a removed origin ends soon. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;
/** Origins already logged as refused; bounded, as anyone can send any Origin. */
const MAX_LOGGED_ORIGINS = 1_000;
/** An Origin longer than this is no browser's; it is logged cut, so a log line stays small. */
const MAX_LOGGED_ORIGIN_LENGTH = 200;

export type CorsDecision =
  /** No Origin, or the gateway's own: not a cross-origin request, so no CORS headers are needed. */
  { kind: 'same-origin' } | { kind: 'allowed'; origin: string; preflight: boolean } | { kind: 'refused'; origin: string; preflight: boolean };

/**
 * Whether a browser may let the page at `Origin` read this answer (and send it credentials). Only exact origins in
 * the list are, never a pattern or `*`: the session cookie is sent with these requests, so every listed origin is
 * trusted with the signed-in user's data.
 */
export function decideCors(
  method: string | undefined,
  headers: Pick<IncomingHttpHeaders, 'origin' | 'host' | 'access-control-request-method'>,
  allowed: ReadonlySet<string>,
  ownOrigin: string | undefined,
): CorsDecision {
  const origin = headers.origin;
  if (origin === undefined || origin === ownOrigin || isHostOf(origin, headers.host)) return { kind: 'same-origin' };
  const preflight = method === 'OPTIONS' && headers['access-control-request-method'] !== undefined;
  return { kind: allowed.has(origin) ? 'allowed' : 'refused', origin, preflight };
}

function isHostOf(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

/**
 * CORS on the routes an app calls (/graphql, /graphql/stream, the JSON sign-in): a preflight is answered here,
 * before Apollo's CSRF prevention would refuse it; any other request gets its headers and goes on to its route.
 */
export class CorsPolicy {
  private readonly allowed: ReadonlySet<string>;
  private readonly logged = new LRUCache<string, true>({ max: MAX_LOGGED_ORIGINS });
  private ownUrl: string | undefined;
  private ownParsed: string | undefined;

  constructor(
    origins: readonly string[],
    private readonly ownOrigin: () => string | undefined,
    private readonly logger: Logger,
  ) {
    this.allowed = new Set(origins);
  }

  /** True when the request was answered (a preflight); otherwise its CORS headers are set and its route serves it. */
  apply(path: string, req: IncomingMessage, res: ServerResponse, requestId: string): boolean {
    varyOnOrigin(res);
    const decision = decideCors(req.method, req.headers, this.allowed, this.own());
    if (decision.kind === 'same-origin') return false;
    if (decision.kind === 'refused') {
      this.noteRefused(decision.origin, path);
      if (!decision.preflight) return false;
      sendError(
        res,
        403,
        'FORBIDDEN',
        `This gateway does not answer pages on ${cut(decision.origin)}: a browser app's origin must be listed in CORS_ORIGINS (exact origins such as http://localhost:5173).`,
        requestId,
      );
      return true;
    }
    res.setHeader('access-control-allow-origin', decision.origin);
    res.setHeader('access-control-allow-credentials', 'true');
    if (!decision.preflight) {
      res.setHeader('access-control-expose-headers', CORS_EXPOSED_HEADERS.join(', '));
      return false;
    }
    res.writeHead(204, {
      'access-control-allow-methods': ALLOWED_METHODS,
      'access-control-allow-headers': CORS_ALLOWED_HEADERS.join(', '),
      'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
      'cache-control': 'no-store',
    });
    res.end();
    return true;
  }

  /** The gateway's own origin, parsed once for each PUBLIC_URL (it is known only once the gateway listens). */
  private own(): string | undefined {
    const url = this.ownOrigin();
    if (url !== this.ownUrl) {
      this.ownUrl = url;
      this.ownParsed = url === undefined ? undefined : new URL(url).origin;
    }
    return this.ownParsed;
  }

  /** Once per origin: a browser app that is refused keeps calling, and one line says why. */
  private noteRefused(origin: string, path: string): void {
    const key = cut(origin);
    if (this.logged.has(key)) return;
    this.logged.set(key, true);
    this.logger.warn(
      { origin: key, path },
      'a browser page on an origin not in CORS_ORIGINS called the gateway: answered without CORS headers, so the browser keeps the answer from the page (list the origin in CORS_ORIGINS to admit it)',
    );
  }
}

function cut(origin: string): string {
  return origin.length > MAX_LOGGED_ORIGIN_LENGTH ? `${origin.slice(0, MAX_LOGGED_ORIGIN_LENGTH)}…` : origin;
}

/**
 * Every answer of these routes varies by Origin, so no cache serves one origin's answer to another; a route that
 * varies by more writes its Vary with `varyAlsoBy`, which keeps this one.
 */
function varyOnOrigin(res: ServerResponse): void {
  res.setHeader('vary', 'Origin');
}

/**
 * The Vary a route writes: `field` added to what is already set (Origin, on the CORS routes). Read here rather than
 * by wrapping `res.setHeader`, as an own property on every response slows each of Node's writes to it.
 */
export function varyAlsoBy(res: ServerResponse, field: string): string {
  const set = res.getHeader('vary');
  const current = set === undefined ? '' : Array.isArray(set) ? set.join(', ') : String(set);
  if (current === '') return field;
  const fields = current.split(',').map((part) => part.trim().toLowerCase());
  return fields.includes(field.toLowerCase()) ? current : `${current}, ${field}`;
}
