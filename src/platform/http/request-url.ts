import type { IncomingMessage } from 'node:http';

/**
 * The request target as a URL on this gateway. `new URL(target, base)` reads a target starting with `//` as a host
 * (`//evil.example/graphql` would route as /graphql) or throws on `//`; prefixing the origin keeps it a path.
 * An absolute-form target (`http://host/path`, as sent to proxies) keeps its path and query.
 */
export function requestUrl(req: Pick<IncomingMessage, 'url'>): URL {
  const target = req.url ?? '/';
  if (target.startsWith('/')) return new URL(`http://gateway${target}`);
  try {
    const absolute = new URL(target);
    return new URL(`http://gateway${absolute.pathname}${absolute.search}`);
  } catch {
    return new URL('http://gateway/');
  }
}
