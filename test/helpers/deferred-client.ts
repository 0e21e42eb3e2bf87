import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

/** How a deferred operation is carried: multipart HTTP on /graphql, graphql-ws, or GraphQL over SSE at /graphql/stream. */
export type DeferTransport = 'http' | 'ws' | 'sse';

export const MULTIPART_DEFER_ACCEPT = 'multipart/mixed;deferSpec=20220824,application/json';

export interface DeferredError {
  message: string;
  path?: (string | number)[];
  extensions?: Record<string, unknown>;
}

/** One payload of an operation delivered incrementally (deferSpec=20220824), or the one answer of a refused one. */
export interface DeferredPayload {
  data?: Record<string, unknown> | null;
  errors?: DeferredError[];
  hasNext?: boolean;
  incremental?: { data?: Record<string, unknown> | null; items?: unknown[]; path?: (string | number)[]; label?: string; errors?: DeferredError[] }[];
}

/** One deferred operation over a real connection: its payloads as they arrive, and how it ended. */
export interface DeferredStream {
  payloads: DeferredPayload[];
  /** The next payload not yet taken, waiting up to timeoutMs for it. */
  next(timeoutMs?: number): Promise<DeferredPayload>;
  /** completed: the protocol's own end (multipart's closing boundary, SSE `complete`, graphql-ws `complete`); close: a WebSocket's close code and reason. */
  ended: Promise<{ completed: boolean; close?: { code: number; reason: string }; error?: unknown }>;
  /** The client goes away: the request aborted, the socket closed. */
  close(): void;
}

export interface DeferredRequest {
  query?: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  documentId?: string;
  extensions?: Record<string, unknown>;
}

/** Runs `request` over `transport`, parsing the wire format itself (no client library's merging in between), except graphql-ws's messages. */
export function streamDeferred(transport: DeferTransport, gatewayUrl: string, request: DeferredRequest, token: string | undefined): DeferredStream {
  const payloads: DeferredPayload[] = [];
  const waiters: ((payload: DeferredPayload) => void)[] = [];
  let taken = 0;
  const push = (payload: DeferredPayload): void => {
    payloads.push(payload);
    const waiter = waiters.shift();
    if (waiter) {
      taken += 1;
      waiter(payload);
    }
  };
  const { ended, close } = transport === 'ws' ? overWs(gatewayUrl, request, token, push) : overHttp(transport, gatewayUrl, request, token, push);
  return {
    payloads,
    ended,
    close,
    next(timeoutMs = 5_000) {
      if (taken < payloads.length) return Promise.resolve(payloads[taken++]!);
      return new Promise<DeferredPayload>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(deliver), 1);
          reject(new Error(`no ${transport} payload within ${timeoutMs} ms (received so far: ${JSON.stringify(payloads)})`));
        }, timeoutMs);
        const deliver = (payload: DeferredPayload): void => {
          clearTimeout(timer);
          resolve(payload);
        };
        waiters.push(deliver);
      });
    },
  };
}

/** Every payload of `request` over `transport`, once the operation has ended. */
export async function deferredOver(
  transport: DeferTransport,
  gatewayUrl: string,
  request: DeferredRequest,
  token: string | undefined,
): Promise<DeferredPayload[]> {
  const stream = streamDeferred(transport, gatewayUrl, request, token);
  const { error } = await stream.ended;
  if (error) throw error instanceof Error ? error : new Error(JSON.stringify(error));
  return stream.payloads;
}

type Ended = DeferredStream['ended'] extends Promise<infer T> ? T : never;

function overWs(
  gatewayUrl: string,
  request: DeferredRequest,
  token: string | undefined,
  push: (payload: DeferredPayload) => void,
): Pick<DeferredStream, 'ended' | 'close'> {
  let socket: WebSocket | undefined;
  const client = createClient({
    url: `${gatewayUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: true,
    on: { connected: (connected) => (socket = connected as WebSocket) },
  });
  const ended = new Promise<Ended>((resolve) => {
    client.subscribe(
      { query: '', ...request },
      {
        next: (payload) => push(payload as DeferredPayload),
        error: (error: unknown) => {
          if (Array.isArray(error)) {
            // graphql-ws's `error` message: the operation refused, its errors as the only answer.
            push({ errors: error as DeferredError[] });
            resolve({ completed: false });
          } else if (error && typeof error === 'object' && 'code' in error) {
            const { code, reason } = error as { code: number; reason: string };
            resolve({ completed: false, close: { code, reason } });
          } else resolve({ completed: false, error });
        },
        complete: () => resolve({ completed: true }),
      },
    );
  });
  void ended.then(() => client.dispose());
  return {
    ended,
    // Closing the socket itself, as a client that went away would: no `complete` message first.
    close: () => socket?.terminate(),
  };
}

function overHttp(
  transport: 'http' | 'sse',
  gatewayUrl: string,
  request: DeferredRequest,
  token: string | undefined,
  push: (payload: DeferredPayload) => void,
): Pick<DeferredStream, 'ended' | 'close'> {
  const abort = new AbortController();
  const ended = (async (): Promise<Ended> => {
    const response = await fetch(`${gatewayUrl}${transport === 'sse' ? '/graphql/stream' : '/graphql'}`, {
      method: 'POST',
      signal: abort.signal,
      headers: {
        'content-type': 'application/json',
        accept: transport === 'sse' ? 'text/event-stream' : MULTIPART_DEFER_ACCEPT,
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      // graphql-sse reads no request without a query string; the gateway resolves a persisted one from its reference.
      body: JSON.stringify(transport === 'sse' ? { query: '', ...request } : request),
    });
    const contentType = response.headers.get('content-type') ?? '';
    // A refusal before anything streams (a document that does not validate, a rate limit) is one JSON answer.
    if (/json/.test(contentType)) {
      push((await response.json()) as DeferredPayload);
      return { completed: false };
    }
    if (transport === 'http' && !contentType.includes('deferSpec=20220824')) throw new Error(`not a deferSpec multipart answer: ${contentType}`);
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      const taken = transport === 'sse' ? takeSseEvents(buffer) : takeParts(buffer);
      buffer = taken.rest;
      for (const payload of taken.payloads) push(payload);
      if (taken.completed) return { completed: true };
    }
    return { completed: false };
  })().catch((error: unknown) => ({ completed: false, error }));
  return { ended, close: () => abort.abort() };
}

/** Whole SSE events: `next` carries a payload, `complete` ends the operation; comments are heartbeats. */
function takeSseEvents(buffer: string): { payloads: DeferredPayload[]; rest: string; completed: boolean } {
  const blocks = buffer.split('\n\n');
  const rest = blocks.pop()!;
  const payloads: DeferredPayload[] = [];
  for (const block of blocks) {
    const event = /^event: (.*)$/m.exec(block)?.[1];
    if (event === 'complete') return { payloads, rest: '', completed: true };
    if (event === 'next') payloads.push(JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as DeferredPayload);
  }
  return { payloads, rest, completed: false };
}

/** Whole multipart parts, each followed by its `\r\n--graphql` boundary, each a payload; `--` after a boundary ends the answer. */
function takeParts(buffer: string): { payloads: DeferredPayload[]; rest: string; completed: boolean } {
  const payloads: DeferredPayload[] = [];
  let rest = buffer.startsWith('\r\n--graphql') ? buffer.slice('\r\n--graphql'.length) : buffer;
  for (;;) {
    if (rest.startsWith('--')) return { payloads, rest: '', completed: true };
    const bodyAt = rest.indexOf('\r\n\r\n');
    const boundary = bodyAt < 0 ? -1 : rest.indexOf('\r\n--graphql', bodyAt);
    if (boundary < 0) return { payloads, rest, completed: false };
    payloads.push(JSON.parse(rest.slice(bodyAt + 4, boundary)) as DeferredPayload);
    rest = rest.slice(boundary + '\r\n--graphql'.length);
  }
}

/** One payload of a multipart answer and when it arrived, in milliseconds since the request was sent. */
export interface TimedPayload {
  at: number;
  payload: DeferredPayload;
}

/**
 * POSTs an operation to /graphql with `accept` and reads the answer as a client would: a multipart answer part by
 * part as its bytes arrive, each part timed; any other answer as its one JSON body.
 */
export async function timedPayloads(
  gatewayUrl: string,
  token: string,
  query: string,
  options: { accept?: string; headers?: Record<string, string> } = {},
): Promise<{ contentType: string; parts: TimedPayload[] }> {
  const started = performance.now();
  const response = await fetch(`${gatewayUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: options.accept ?? MULTIPART_DEFER_ACCEPT, authorization: `Bearer ${token}`, ...options.headers },
    body: JSON.stringify({ query }),
  });
  const contentType = response.headers.get('content-type') ?? '';
  if (!contentType.startsWith('multipart/mixed'))
    return { contentType, parts: [{ at: performance.now() - started, payload: (await response.json()) as DeferredPayload }] };
  const parts: TimedPayload[] = [];
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of response.body!) {
    text += decoder.decode(chunk as Uint8Array, { stream: true });
    const pieces = text.split('\r\n--graphql');
    text = pieces.pop()!;
    for (const piece of pieces) {
      const body = piece.slice(piece.indexOf('\r\n\r\n') + 4);
      if (body.trim().startsWith('{')) parts.push({ at: performance.now() - started, payload: JSON.parse(body) as DeferredPayload });
    }
  }
  return { contentType, parts };
}
