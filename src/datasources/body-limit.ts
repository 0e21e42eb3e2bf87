import type { Dispatcher } from 'undici';
import { ProviderBody } from './provider-body';

/** A provider answer larger than PROVIDER_MAX_BODY_BYTES: refused while reading, so it never sits in memory whole. */
export class ProviderBodyTooLargeError extends Error {
  override readonly name = 'ProviderBodyTooLargeError';
  readonly code = 'PROVIDER_BODY_TOO_LARGE';

  constructor(readonly limitBytes: number) {
    super(`the provider's answer exceeded ${limitBytes} bytes`);
  }
}

/** The body's bytes, or ProviderBodyTooLargeError as soon as Content-Length or the bytes read pass `limitBytes`. */
export async function readCappedBody(response: Dispatcher.ResponseData, limitBytes: number): Promise<ProviderBody> {
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    response.body.destroy();
    throw new ProviderBodyTooLargeError(limitBytes);
  }
  // Events rather than `for await`: the async iterator costs a promise and a queue turn per chunk, and this runs
  // for every provider answer. The chunks are kept as they came (see provider-body.ts).
  const body = response.body;
  return new Promise<ProviderBody>((resolve, reject) => {
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
    body.once('end', () => resolve(new ProviderBody(chunks)));
  });
}
