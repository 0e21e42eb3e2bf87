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

export interface ProviderAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: ProviderBody;
}

/** An aborted send rejects with its signal's reason, as undici's own `request` does. */
export class ProviderRequestAbortedError extends Error {
  override readonly name = 'ProviderRequestAbortedError';
  readonly code = 'UND_ERR_ABORTED';

  constructor() {
    super('the provider request was aborted');
  }
}

/**
 * Sends one request through undici's dispatcher and collects the answer's bytes, refusing with
 * ProviderBodyTooLargeError as soon as Content-Length or the bytes read pass `limitBytes`. The chunks are kept as
 * they came (see provider-body.ts).
 *
 * A dispatch handler of our own rather than undici's `request`: that one wraps every answer in a Readable stream
 * (and an AsyncResource), and the gateway reads every answer whole, so the stream's buffering, events and state
 * would be pure cost on every provider call.
 * Any of `signals` aborting aborts the send, which then rejects with that signal's reason.
 */
export function dispatchForAnswer(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  signals: readonly AbortSignal[],
  limitBytes: number,
): Promise<ProviderAnswer> {
  return new Promise((resolve, reject) => {
    dispatcher.dispatch(options, new AnswerCollector(resolve, reject, signals, limitBytes));
  });
}

class AnswerCollector implements Dispatcher.DispatchHandler {
  private status = 0;
  private headers: ProviderAnswer['headers'] = {};
  private readonly chunks: Buffer[] = [];
  private received = 0;
  private controller: Dispatcher.DispatchController | undefined;
  private abortedWith: unknown;
  private settled = false;
  private readonly onAbort: (() => void) | undefined;

  constructor(
    private readonly resolve: (answer: ProviderAnswer) => void,
    private readonly reject: (error: unknown) => void,
    private readonly signals: readonly AbortSignal[],
    private readonly limitBytes: number,
  ) {
    if (signals.length === 0) return;
    const aborted = signals.find((signal) => signal.aborted);
    if (aborted) {
      this.abortedWith = aborted.reason ?? new ProviderRequestAbortedError();
      return;
    }
    this.onAbort = () => {
      const signal = signals.find((candidate) => candidate.aborted);
      this.abortedWith = signal?.reason ?? new ProviderRequestAbortedError();
      this.controller?.abort(this.abortedWith as Error);
    };
    for (const signal of signals) signal.addEventListener('abort', this.onAbort, { once: true });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortedWith !== undefined) controller.abort(this.abortedWith as Error);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[]>): void {
    // 1xx answers are informational; the real one follows.
    if (statusCode < 200) return;
    this.status = statusCode;
    this.headers = headers;
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > this.limitBytes) controller.abort(new ProviderBodyTooLargeError(this.limitBytes));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.received += chunk.length;
    if (this.received > this.limitBytes) {
      controller.abort(new ProviderBodyTooLargeError(this.limitBytes));
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settle()) this.resolve({ status: this.status, headers: this.headers, body: new ProviderBody(this.chunks) });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.settle()) this.reject(this.abortedWith ?? error);
  }

  /** True the first time: an answer settles once, whatever undici reports after. */
  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    if (this.onAbort) for (const signal of this.signals) signal.removeEventListener('abort', this.onAbort);
    return true;
  }
}
