import { performance } from 'node:perf_hooks';
import { MultipartReader, multipartBoundary } from './multipart-reader';

/** What a client of @defer asks for: the payloads as multipart parts, or else one JSON answer. */
export const DEFER_ACCEPT = 'multipart/mixed;deferSpec=20220824,application/json';

/** One payload of the deferSpec=20220824 format: the first carries `data`, the later ones `incremental`. */
export interface IncrementalPayload {
  data?: Record<string, unknown> | null;
  errors?: unknown[];
  hasNext?: boolean;
  incremental?: { data?: Record<string, unknown> | null; items?: unknown[]; path?: (string | number)[]; label?: string; errors?: unknown[] }[];
}

export interface TimedPayload {
  /** Milliseconds from the request being sent to the delimiter after this part arriving. */
  atMs: number;
  payload: IncrementalPayload;
}

/** Every payload of a whole multipart answer; it must be a 200 and end with the close delimiter. */
export function payloadsOfBody(status: number, contentType: string, body: string): IncrementalPayload[] {
  const boundary = multipartBoundary(contentType);
  if (status !== 200 || boundary === undefined) throw notMultipart(status, contentType, body);
  const payloads: IncrementalPayload[] = [];
  const reader = new MultipartReader(boundary, (part) => payloads.push(part as IncrementalPayload));
  reader.push(Buffer.from(body, 'utf8'));
  if (!reader.closed) throw new Error(`the multipart answer ended without its close delimiter after ${payloads.length} payload(s)`);
  return payloads;
}

function notMultipart(status: number, contentType: string, body: string): Error {
  return new Error(`expected a 200 of multipart/mixed with a boundary, got HTTP ${status} of "${contentType}": ${body.slice(0, 300)}`);
}

/**
 * POSTs an operation with `Accept: multipart/mixed;deferSpec=20220824` and reads its payloads as they arrive, each
 * with the time its part was complete. The stream must end with the close delimiter within `timeoutMs`.
 */
export async function postDeferred(url: string, body: string, headers: Record<string, string>, timeoutMs = 30_000): Promise<TimedPayload[]> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: DEFER_ACCEPT, ...headers },
    body,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const contentType = response.headers.get('content-type') ?? '';
  const boundary = multipartBoundary(contentType);
  if (response.status !== 200 || boundary === undefined || !response.body) throw notMultipart(response.status, contentType, await response.text());
  const timed: TimedPayload[] = [];
  let atMs = 0;
  const reader = new MultipartReader(boundary, (part) => timed.push({ atMs, payload: part as IncrementalPayload }));
  for await (const chunk of response.body) {
    // Timed before parsing: the part had arrived whole once this chunk had.
    atMs = performance.now() - started;
    reader.push(chunk);
  }
  if (!reader.closed) throw new Error(`${url}: the multipart answer ended without its close delimiter after ${timed.length} payload(s)`);
  return timed;
}

/**
 * The data the payloads add up to: the first payload's data with every deferred fragment's data merged in at its
 * path. Throws unless the first payload has data and says more follows (when more does), only the last says
 * `hasNext: false`, and no payload or fragment carries errors.
 */
export function mergePayloads(payloads: readonly IncrementalPayload[], what: string): Record<string, unknown> {
  const [first] = payloads;
  if (!first?.data) throw new Error(`${what}: the first payload has no data: ${JSON.stringify(first ?? null).slice(0, 300)}`);
  const merged = structuredClone(first.data);
  payloads.forEach((payload, index) => {
    const last = index === payloads.length - 1;
    if (payload.hasNext !== !last) throw new Error(`${what}: payload ${index + 1} of ${payloads.length} has hasNext ${String(payload.hasNext)}`);
    if (payload.errors?.length) throw new Error(`${what}: payload ${index + 1} has errors ${JSON.stringify(payload.errors).slice(0, 300)}`);
    if (index === 0) return;
    if (!payload.incremental) throw new Error(`${what}: payload ${index + 1} has no incremental results`);
    for (const part of payload.incremental) {
      if (part.errors?.length)
        throw new Error(`${what}: a deferred result at ${JSON.stringify(part.path)} has errors ${JSON.stringify(part.errors).slice(0, 300)}`);
      if (!part.data || !part.path) throw new Error(`${what}: an incremental result that is not a deferred fragment: ${JSON.stringify(part).slice(0, 300)}`);
      Object.assign(objectAt(merged, part.path, what), part.data);
    }
  });
  return merged;
}

function objectAt(root: Record<string, unknown>, path: readonly (string | number)[], what: string): Record<string, unknown> {
  let node: unknown = root;
  for (const key of path) {
    node = typeof node === 'object' && node !== null ? (node as Record<string | number, unknown>)[key] : undefined;
  }
  if (typeof node !== 'object' || node === null || Array.isArray(node))
    throw new Error(`${what}: a deferred result's path ${JSON.stringify(path)} is not an object in the data`);
  return node as Record<string, unknown>;
}
