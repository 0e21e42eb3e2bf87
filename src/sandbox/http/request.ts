import type { IncomingMessage } from 'node:http';

/** Large enough for any provider request body; anything bigger is refused before it is buffered whole. */
export const MAX_BODY_BYTES = 256 * 1024;

export class BodyTooLargeError extends Error {}

export class MalformedBodyError extends Error {}

export interface SandboxRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  params: Record<string, string>;
  rawBody: Buffer;
  /** The origin this request reached, e.g. `http://127.0.0.1:4010`; used to build results_uri and jku. */
  origin: string;
  header(name: string): string | undefined;
  /** The JSON body; throws MalformedBodyError when the content type or the bytes are not JSON. */
  json(): unknown;
  /** The form body (application/x-www-form-urlencoded); throws MalformedBodyError otherwise. */
  form(): URLSearchParams;
}

export async function readBody(message: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of message) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLargeError(`request body exceeds ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function toSandboxRequest(message: IncomingMessage, rawBody: Buffer, origin: string): SandboxRequest {
  const url = new URL(message.url ?? '/', origin);
  const header = (name: string): string | undefined => {
    const value = message.headers[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  };
  const contentType = (header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  return {
    method: message.method ?? 'GET',
    path: url.pathname,
    query: url.searchParams,
    headers: message.headers,
    params: {},
    rawBody,
    origin,
    header,
    json() {
      if (contentType !== 'application/json') {
        throw new MalformedBodyError(`expected Content-Type application/json, got ${contentType || 'none'}`);
      }
      try {
        return JSON.parse(rawBody.toString('utf8'));
      } catch {
        throw new MalformedBodyError('the body is not valid JSON');
      }
    },
    form() {
      if (contentType !== 'application/x-www-form-urlencoded') {
        throw new MalformedBodyError(`expected Content-Type application/x-www-form-urlencoded, got ${contentType || 'none'}`);
      }
      return new URLSearchParams(rawBody.toString('utf8'));
    },
  };
}
