import type { ServerResponse } from 'node:http';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string | string[]> = {}): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': bytes.length, 'cache-control': 'no-store', ...headers });
  res.end(bytes);
}

export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  contentType = 'text/plain; charset=utf-8',
  headers: Record<string, string> = {},
): void {
  const bytes = Buffer.from(text);
  res.writeHead(status, { 'content-type': contentType, 'content-length': bytes.length, ...headers });
  res.end(bytes);
}

export function redirect(res: ServerResponse, location: string, headers: Record<string, string | string[]> = {}): void {
  res.writeHead(302, { location, 'cache-control': 'no-store', ...headers });
  res.end();
}

/** Errors outside GraphQL (auth routes, webhooks) use the same codes as GraphQL errors, plus the request id. */
export function sendError(res: ServerResponse, status: number, code: string, message: string, requestId: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: { code, message, requestId } }, headers);
}
