/** A multipart body that breaks RFC 2046 or the GraphQL multipart formats: what was wrong, for the failure message. */
export class MultipartViolation extends Error {}

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
 * Reads a multipart/mixed body of JSON parts in whatever pieces it arrives, as Apollo Client reads them: each part
 * (headers, a blank line, a JSON object) is handed to `onPart` once the delimiter after it has come, so a server
 * must write the delimiter right after each part. Both the @defer payloads (deferSpec=20220824) and Apollo's
 * multipart subscriptions are read with it.
 */
export class MultipartReader {
  private readonly delimiter: Buffer;
  private parse = Parse.Preamble;
  /** Bytes not yet parsed (copied). */
  private pending: Buffer | undefined;

  constructor(
    boundary: string,
    private readonly onPart: (part: Record<string, unknown>) => void,
  ) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  /** True once the close delimiter has been read. */
  get closed(): boolean {
    return this.parse === Parse.Closed;
  }

  /**
   * Hands on every part `bytes` completes; throws a MultipartViolation at the first thing that is not multipart JSON,
   * after which it reads nothing more.
   */
  push(bytes: Uint8Array): void {
    if (this.closed) return;
    const data = this.pending ? Buffer.concat([this.pending, bytes]) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pending = undefined;
    let offset = 0;
    try {
      while (offset < data.length && !this.closed) {
        const used = this.step(data, offset);
        if (used === 0) break;
        offset += used;
      }
    } catch (error) {
      this.parse = Parse.Closed;
      throw error;
    }
    if (offset < data.length && !this.closed) this.pending = Buffer.from(data.subarray(offset));
  }

  /** Parses what starts at `offset`: the bytes it took, or 0 when more must arrive first. */
  private step(data: Buffer, offset: number): number {
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
        if (data[offset] !== 0x0d || data[offset + 1] !== 0x0a) throw new MultipartViolation('a delimiter followed by neither CRLF nor --');
        this.parse = Parse.Part;
        return 2;
      }
      case Parse.Part: {
        const at = data.indexOf(delimiter, offset);
        if (at < 0) return 0;
        this.onPart(jsonPart(data, offset, at));
        this.parse = Parse.AfterDelimiter;
        return at + delimiter.length - offset;
      }
      case Parse.Closed:
        return data.length - offset;
    }
  }
}

/** One part, `data[start, end)`: headers, a blank line, a JSON object. */
function jsonPart(data: Buffer, start: number, end: number): Record<string, unknown> {
  const headersEnd = data[start] === 0x0d && data[start + 1] === 0x0a ? start : data.indexOf('\r\n\r\n', start);
  if (headersEnd < 0 || headersEnd >= end) throw new MultipartViolation('a part without a blank line after its headers');
  let contentType: string | undefined;
  for (const line of headersEnd > start ? data.toString('latin1', start, headersEnd).split('\r\n') : []) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new MultipartViolation(`a malformed part header: ${line.slice(0, 100)}`);
    if (line.slice(0, colon).trim().toLowerCase() === 'content-type') contentType = line.slice(colon + 1).trim();
  }
  if (!contentType || !/^application\/json\s*(;|$)/i.test(contentType)) throw new MultipartViolation(`a part of content type "${contentType ?? 'none'}"`);
  const bodyStart = headersEnd === start ? start + 2 : headersEnd + 4;
  let part: unknown;
  try {
    part = JSON.parse(data.toString('utf8', bodyStart, end));
  } catch {
    throw new MultipartViolation(`a part that is not JSON: ${data.toString('utf8', bodyStart, Math.min(end, bodyStart + 200))}`);
  }
  if (typeof part !== 'object' || part === null || Array.isArray(part)) throw new MultipartViolation('a part that is not a JSON object');
  return part as Record<string, unknown>;
}

/** The boundary a multipart/mixed Content-Type names; undefined for any other content type or none named. */
export function multipartBoundary(contentType: string): string | undefined {
  if (!/^multipart\/mixed\s*(;|$)/i.test(contentType)) return undefined;
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return boundary ? (boundary[1] ?? boundary[2]) : undefined;
}
