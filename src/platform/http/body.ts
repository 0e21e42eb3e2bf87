import type { IncomingMessage } from 'node:http';

export class PayloadTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the request body exceeds ${limitBytes} bytes`);
  }
}

/** Reads a request body, refusing it as soon as it passes `limitBytes` rather than after buffering it whole. */
export async function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) throw new PayloadTooLargeError(limitBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) throw new PayloadTooLargeError(limitBytes);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
