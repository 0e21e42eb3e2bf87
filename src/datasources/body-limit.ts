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
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    received += chunk.length;
    if (received > limitBytes) {
      response.body.destroy();
      throw new ProviderBodyTooLargeError(limitBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, received).toString('utf8');
}
