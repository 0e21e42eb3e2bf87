import { performance } from 'node:perf_hooks';

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

const enum Parse {
  /** Before the first delimiter (RFC 2046 5.1.1: a preamble, which may be empty). */
  Preamble,
  /** Just after a delimiter: `--` closes the body, CRLF opens a part. */
  AfterDelimiter,
  Part,
  /** After the close delimiter: nothing more may come but an epilogue, which is ignored. */
  Closed,
}

/**
 * Reads a multipart/mixed body of incremental payloads in whatever pieces it arrives: each part (headers, a blank
 * line, JSON) is handed on once the delimiter after it has come, as Apollo Client reads them. A part that is not
 * application/json or not a JSON object, and a delimiter followed by neither CRLF nor `--`, throw.
 */
export class MultipartPayloadReader {
  private readonly delimiter: Buffer;
  private parse = Parse.Preamble;
  private pending = Buffer.alloc(0);

  constructor(boundary: string) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  /** True once the close delimiter has been read. */
  get closed(): boolean {
    return this.parse === Parse.Closed;
  }

  /** The payloads whose parts `bytes` completed. */
  push(bytes: Uint8Array): IncrementalPayload[] {
    if (this.parse === Parse.Closed) return [];
    const data = this.pending.length === 0 ? Buffer.from(bytes) : Buffer.concat([this.pending, bytes]);
    const payloads: IncrementalPayload[] = [];
    let offset = 0;
    while (offset < data.length && !this.closed) {
      const used = this.step(data, offset, payloads);
      if (used === 0) break;
      offset += used;
    }
    this.pending = this.closed ? Buffer.alloc(0) : Buffer.from(data.subarray(offset));
    return payloads;
  }

  /** Parses what starts at `offset`: the bytes it took, or 0 when more must arrive first. */
  private step(data: Buffer, offset: number, payloads: IncrementalPayload[]): number {
    const { delimiter } = this;
    switch (this.parse) {
      case Parse.Preamble: {
        // The first delimiter may open the body, without the CRLF before it.
        const dashes = delimiter.subarray(2);
        if (data.length - offset >= dashes.length && data.subarray(offset, offset + dashes.length).equals(dashes)) {
          this.parse = Parse.AfterDelimiter;
          return dashes.length;
        }
        const at = data.indexOf(delimiter, offset);
        if (at < 0) return 0;
        this.parse = Parse.AfterDelimiter;
        return at + delimiter.length - offset;
      }
      case Parse.AfterDelimiter: {
        if (data.length - offset < 2) return 0;
        if (data[offset] === 0x2d && data[offset + 1] === 0x2d) {
          this.parse = Parse.Closed;
          return 2;
        }
        if (data[offset] !== 0x0d || data[offset + 1] !== 0x0a) throw new Error('multipart body: a delimiter followed by neither CRLF nor --');
        this.parse = Parse.Part;
        return 2;
      }
      case Parse.Part: {
        const at = data.indexOf(delimiter, offset);
        if (at < 0) return 0;
        payloads.push(partPayload(data, offset, at));
        this.parse = Parse.AfterDelimiter;
        return at + delimiter.length - offset;
      }
      case Parse.Closed:
        return data.length - offset;
    }
  }
}

/** One part, `data[start, end)`: headers, a blank line, a JSON object. */
function partPayload(data: Buffer, start: number, end: number): IncrementalPayload {
  const headersEnd = data[start] === 0x0d && data[start + 1] === 0x0a ? start : data.indexOf('\r\n\r\n', start);
  if (headersEnd < 0 || headersEnd >= end) throw new Error('multipart body: a part without a blank line after its headers');
  let contentType: string | undefined;
  for (const line of headersEnd > start ? data.toString('latin1', start, headersEnd).split('\r\n') : []) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`multipart body: a malformed part header: ${line.slice(0, 100)}`);
    if (line.slice(0, colon).trim().toLowerCase() === 'content-type') contentType = line.slice(colon + 1).trim();
  }
  if (!contentType || !/^application\/json\s*(;|$)/i.test(contentType))
    throw new Error(`multipart body: a part of content type "${contentType ?? 'none'}", not application/json`);
  const text = data.toString('utf8', headersEnd === start ? start + 2 : headersEnd + 4, end);
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    throw new Error(`multipart body: a part that is not JSON: ${text.slice(0, 200)}`);
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    throw new Error(`multipart body: a part that is not a JSON object: ${text.slice(0, 200)}`);
  return payload as IncrementalPayload;
}

/** The boundary a multipart/mixed Content-Type names; undefined for any other content type. */
export function multipartBoundary(contentType: string): string | undefined {
  if (!/^multipart\/mixed\s*(;|$)/i.test(contentType)) return undefined;
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return boundary ? (boundary[1] ?? boundary[2]) : undefined;
}

/** Every payload of a whole multipart answer; it must be a 200 and end with the close delimiter. */
export function payloadsOfBody(status: number, contentType: string, body: string): IncrementalPayload[] {
  const boundary = multipartBoundary(contentType);
  if (status !== 200 || boundary === undefined) throw notMultipart(status, contentType, body);
  const reader = new MultipartPayloadReader(boundary);
  const payloads = reader.push(Buffer.from(body, 'utf8'));
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
  const reader = new MultipartPayloadReader(boundary);
  const timed: TimedPayload[] = [];
  for await (const chunk of response.body) {
    // Timed before parsing: the part had arrived whole once this chunk had.
    const atMs = performance.now() - started;
    for (const payload of reader.push(chunk)) timed.push({ atMs, payload });
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
