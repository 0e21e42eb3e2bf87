/** The browser's gateway session (bank identity); the WebSocket origin check looks for it too. */
export const SESSION_COOKIE = 'bankgraph_session';

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return decodeCookieValue(part.slice(index + 1).trim());
  }
  return undefined;
}

/** A value that is not valid percent-encoding (`%`, `%zz`) is kept as sent: it is then simply an unknown session. */
function decodeCookieValue(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
