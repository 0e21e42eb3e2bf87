import type { LiveResult } from './ws-client';

/** Which HTTP streaming protocol: GraphQL over SSE at /graphql/stream, or Apollo's multipart subscriptions on /graphql. */
export type StreamTransport = 'sse' | 'multipart';

export const MULTIPART_ACCEPT = 'multipart/mixed;boundary="graphql";subscriptionSpec="1.0",application/json';

export interface StreamOptions {
  token?: string;
  headers?: Record<string, string>;
  /** More of the request body (documentId, extensions); `query` is left out when this has none and the query is ''. */
  body?: Record<string, unknown>;
  /** GET sends the operation in the URL (variables as JSON) with no body and no content type, as a link or EventSource does. */
  method?: 'GET' | 'POST';
}

/** One operation over a real HTTP stream, read byte by byte as a client would, protocol frames included. */
export interface HttpStream<T> {
  /** The response's status and content type, once its head arrived. */
  head: Promise<{ status: number; contentType: string; requestId: string | null }>;
  results: LiveResult<T>[];
  /** SSE comment lines or multipart `{}` parts seen so far. */
  heartbeats(): number;
  next(timeoutMs?: number): Promise<LiveResult<T>>;
  /** completed: the protocol's own end (SSE `complete`, the closing boundary); terminal: multipart's `payload: null` errors. */
  ended: Promise<{ completed: boolean; terminal?: LiveResult<T>['errors']; error?: unknown }>;
  close(): void;
}

const open = new Set<HttpStream<unknown>>();

/** Subscribes over SSE or multipart HTTP with fetch, parsing the stream itself (no client library in between). */
export function streamOverHttp<T>(
  transport: StreamTransport,
  gatewayUrl: string,
  query: string,
  variables?: Record<string, unknown>,
  options: StreamOptions = {},
): HttpStream<T> {
  const abort = new AbortController();
  const results: LiveResult<T>[] = [];
  const waiters: ((result: LiveResult<T>) => void)[] = [];
  let taken = 0;
  let beats = 0;
  let settle!: (outcome: { completed: boolean; terminal?: LiveResult<T>['errors']; error?: unknown }) => void;
  const ended = new Promise<{ completed: boolean; terminal?: LiveResult<T>['errors']; error?: unknown }>((resolve) => (settle = resolve));
  const push = (result: LiveResult<T>): void => {
    results.push(result);
    const waiter = waiters.shift();
    if (waiter) {
      taken += 1;
      waiter(result);
    }
  };
  const get = options.method === 'GET';
  const search = get ? `?${new URLSearchParams({ query, ...(variables ? { variables: JSON.stringify(variables) } : {}) })}` : '';
  const response = fetch(`${gatewayUrl}${transport === 'sse' ? '/graphql/stream' : '/graphql'}${search}`, {
    method: get ? 'GET' : 'POST',
    signal: abort.signal,
    headers: {
      ...(get ? {} : { 'content-type': 'application/json' }),
      accept: transport === 'sse' ? 'text/event-stream' : MULTIPART_ACCEPT,
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    ...(get ? {} : { body: JSON.stringify({ query, variables, ...options.body }) }),
  });
  const head = response.then((answer) => ({
    status: answer.status,
    contentType: answer.headers.get('content-type') ?? '',
    requestId: answer.headers.get('x-request-id'),
  }));
  void (async () => {
    const answer = await response;
    const contentType = answer.headers.get('content-type') ?? '';
    if (/json/.test(contentType)) {
      push((await answer.json()) as LiveResult<T>);
      return settle({ completed: false });
    }
    const reader = answer.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return settle({ completed: false });
      buffer += decoder.decode(value, { stream: true });
      const parsed = transport === 'sse' ? takeSseEvents(buffer) : takeParts(buffer);
      buffer = parsed.rest;
      for (const frame of parsed.frames) {
        if (frame.kind === 'heartbeat') beats += 1;
        else if (frame.kind === 'result') push(frame.result as LiveResult<T>);
        else if (frame.kind === 'terminal') {
          push({ errors: frame.errors } as LiveResult<T>);
          settle({ completed: false, terminal: frame.errors as LiveResult<T>['errors'] });
        } else return settle({ completed: true });
      }
    }
  })().catch((error: unknown) => settle({ completed: false, error }));

  const stream: HttpStream<T> = {
    head,
    results,
    heartbeats: () => beats,
    ended,
    close: () => {
      open.delete(stream as HttpStream<unknown>);
      abort.abort();
    },
    next(timeoutMs = 5_000) {
      if (taken < results.length) return Promise.resolve(results[taken++]!);
      return new Promise<LiveResult<T>>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(deliver), 1);
          reject(new Error(`no ${transport} result within ${timeoutMs} ms (received so far: ${JSON.stringify(results)})`));
        }, timeoutMs);
        const deliver = (result: LiveResult<T>): void => {
          clearTimeout(timer);
          resolve(result);
        };
        waiters.push(deliver);
      });
    },
  };
  open.add(stream as HttpStream<unknown>);
  return stream;
}

/** For afterEach: closes every stream a test opened. */
export function closeHttpStreams(): void {
  for (const stream of open) stream.close();
}

type Frame = { kind: 'heartbeat' } | { kind: 'result'; result: unknown } | { kind: 'terminal'; errors: unknown } | { kind: 'end' };

/** Whole SSE events (blank-line separated): comments are heartbeats; `next` carries a result; `complete` ends. */
function takeSseEvents(buffer: string): { frames: Frame[]; rest: string } {
  const blocks = buffer.split('\n\n');
  const rest = blocks.pop()!;
  const frames: Frame[] = [];
  for (const block of blocks) {
    if (block.startsWith(':')) {
      frames.push({ kind: 'heartbeat' });
      continue;
    }
    const event = /^event: (.*)$/m.exec(block)?.[1];
    const data = /^data: (.*)$/m.exec(block)?.[1];
    if (event === 'next') frames.push({ kind: 'result', result: JSON.parse(data!) });
    else if (event === 'complete') frames.push({ kind: 'end' });
  }
  return { frames, rest };
}

/** Whole multipart parts (each followed by its `\r\n--graphql` boundary): `{}` heartbeats, payloads, `--` the end. */
function takeParts(buffer: string): { frames: Frame[]; rest: string } {
  const frames: Frame[] = [];
  let rest = buffer;
  for (;;) {
    if (rest.startsWith('--')) {
      frames.push({ kind: 'end' });
      return { frames, rest: '' };
    }
    const boundary = rest.indexOf('\r\n--graphql');
    if (boundary < 0) return { frames, rest };
    const part = rest.slice(0, boundary);
    rest = rest.slice(boundary + '\r\n--graphql'.length);
    const bodyAt = part.indexOf('\r\n\r\n');
    if (bodyAt < 0) continue;
    const body = JSON.parse(part.slice(bodyAt + 4)) as { payload?: unknown; errors?: unknown };
    if (Object.keys(body).length === 0) frames.push({ kind: 'heartbeat' });
    else if (body.payload === null) frames.push({ kind: 'terminal', errors: body.errors });
    else frames.push({ kind: 'result', result: body.payload });
  }
}
