/** The names a browser may use for this machine; cookies are kept per name, so each is a site of its own. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The address a sign-in runs on: the bank's redirect_uri, the login cookie and the final redirect all follow it.
 * PUBLIC_URL, except outside production when PUBLIC_URL is on a loopback name and the browser reached the gateway
 * (its Host header) on another loopback name with the same port: then PUBLIC_URL with that name, so a sign-in
 * started at http://127.0.0.1:4000 comes back there and finds its cookie, whatever PUBLIC_URL says. In production
 * the Host header is never used: PUBLIC_URL is what the bank has registered.
 */
export function signInBase(publicUrl: string, host: string | undefined, production: boolean): string {
  if (production) return publicUrl;
  const configured = new URL(publicUrl);
  const reached = hostUrl(configured.protocol, host);
  if (!reached || !LOOPBACK_HOSTS.has(configured.hostname) || !LOOPBACK_HOSTS.has(reached.hostname)) return publicUrl;
  if (reached.port !== configured.port || reached.hostname === configured.hostname) return publicUrl;
  configured.hostname = reached.hostname;
  return configured.href.replace(/\/+$/, '');
}

/**
 * Where the browser reached the gateway: PUBLIC_URL's scheme (the gateway cannot see one a proxy ended) and the
 * Host header, when that is a host and nothing else. Undefined for a missing or malformed Host.
 */
export function reachedOrigin(publicUrl: string, host: string | undefined): string | undefined {
  return hostUrl(new URL(publicUrl).protocol, host)?.origin;
}

function hostUrl(protocol: string, host: string | undefined): URL | undefined {
  // A host name or an IPv6 literal and an optional port, nothing else: the value ends up in redirects and messages.
  if (host === undefined || host.length > 255 || !/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host)) return undefined;
  try {
    return new URL(`${protocol}//${host}`);
  } catch {
    return undefined;
  }
}
