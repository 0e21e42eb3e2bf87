/*
 * A provider answer's bytes, kept as the chunks the socket delivered them in: never joined, and decoded only
 * where they are read.
 *
 * Why not one string: a large string lives on V8's large-object pages, mapped and unmapped each time (page faults),
 * and strings cut small enough for the young generation get copied by every scavenge while the cache holds them;
 * bytes stay off the JavaScript heap, and a byte loop scans them fastest.
 */

export class ProviderBody {
  readonly chunks: readonly Uint8Array[];
  /** Chunk k starts at byte starts[k]; one more entry holds the total length. */
  private readonly starts: number[];
  readonly length: number;

  constructor(chunks: readonly Uint8Array[]) {
    // An empty chunk would hold no byte its start could find.
    this.chunks = chunks.filter((chunk) => chunk.length > 0);
    this.starts = [0];
    let length = 0;
    for (const chunk of this.chunks) this.starts.push((length += chunk.length));
    this.length = length;
  }

  static fromString(text: string): ProviderBody {
    return new ProviderBody([Buffer.from(text, 'utf8')]);
  }

  /** Which chunk holds byte `index` (the last one for the end of the body). */
  chunkAt(index: number): number {
    const { starts } = this;
    let low = 0;
    let high = this.chunks.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (starts[middle]! <= index) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  chunkStart(chunk: number): number {
    return this.starts[chunk]!;
  }

  /** The byte at `index`, or NaN past the end. */
  byteAt(index: number): number {
    const chunk = this.chunkAt(index);
    return this.chunks[chunk]?.[index - this.starts[chunk]!] ?? Number.NaN;
  }

  /** Bytes start to end (0 <= start <= end <= length) decoded as UTF-8; a character split between chunks included. */
  text(start: number, end: number): string {
    if (end <= start) return '';
    const bytes = this.bytes(start, end);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8');
  }

  /** The bytes start to end, copied into one buffer only when they span chunks. */
  bytes(start: number, end: number): Uint8Array {
    const first = this.chunkAt(start);
    const from = start - this.starts[first]!;
    const chunk = this.chunks[first]!;
    if (from + (end - start) <= chunk.length) return chunk.subarray(from, from + (end - start));
    return this.copy(start, end);
  }

  /** Only JSON whitespace (or nothing) from byte `start` on. */
  isBlankFrom(start: number): boolean {
    for (let k = this.chunkAt(start); k < this.chunks.length; k += 1) {
      const chunk = this.chunks[k]!;
      for (let i = Math.max(0, start - this.starts[k]!); i < chunk.length; i += 1) if (chunk[i]! > 0x20) return false;
    }
    return true;
  }

  /** The whole body as one string: for answers that are read whole (small ones, errors). */
  toString(): string {
    return this.text(0, this.length);
  }

  private copy(start: number, end: number): Uint8Array {
    const out = new Uint8Array(end - start);
    let at = 0;
    for (let k = this.chunkAt(start); at < out.length; k += 1) {
      const chunk = this.chunks[k]!;
      const from = Math.max(0, start - this.starts[k]!);
      const piece = chunk.subarray(from, Math.min(chunk.length, from + (out.length - at)));
      out.set(piece, at);
      at += piece.length;
    }
    return out;
  }
}
