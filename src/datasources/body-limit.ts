import type { Dispatcher } from 'undici';

/** A provider answer larger than PROVIDER_MAX_BODY_BYTES: refused while reading, so it never sits in memory whole. */
export class ProviderBodyTooLargeError extends Error {
  override readonly name = 'ProviderBodyTooLargeError';
  readonly code = 'PROVIDER_BODY_TOO_LARGE';

  constructor(readonly limitBytes: number) {
    super(`the provider's answer exceeded ${limitBytes} bytes`);
  }
}

/** The body as text, or ProviderBodyTooLargeError as soon as Content-Length or the bytes read pass `limitBytes`. */
export async function readCappedText(response: Dispatcher.ResponseData, limitBytes: number): Promise<string> {
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    response.body.destroy();
    throw new ProviderBodyTooLargeError(limitBytes);
  }
  // Events rather than `for await`: the async iterator costs a promise and a queue turn per chunk, and this runs
  // for every provider answer. An answer that came in one chunk (most do) is decoded without a copy.
  const body = response.body;
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    body.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > limitBytes) {
        body.destroy();
        reject(new ProviderBodyTooLargeError(limitBytes));
        return;
      }
      chunks.push(chunk);
    });
    body.once('error', reject);
    body.once('end', () => resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, received).toString('utf8')));
  });
}
