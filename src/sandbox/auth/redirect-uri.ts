const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether `candidate` is one of the client's allow-listed redirect URIs: an exact match, except that for loopback
 * hosts the port is ignored, because native apps and local dev servers listen on whatever port is free
 * (RFC 8252 §7.3). A fragment is never allowed (RFC 6749 §3.1.2).
 */
export function isAllowedRedirectUri(candidate: string, allowList: readonly string[]): boolean {
  const target = parse(candidate);
  if (!target || target.hash !== '' || candidate.includes('#')) return false;
  return allowList.some((allowed) => {
    const entry = parse(allowed);
    if (!entry) return false;
    if (!LOOPBACK_HOSTS.has(entry.hostname)) return entry.href === target.href;
    return (
      entry.protocol === target.protocol &&
      entry.hostname === target.hostname &&
      entry.pathname === target.pathname &&
      entry.search === target.search &&
      entry.username === target.username &&
      entry.password === target.password
    );
  });
}

function parse(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}
