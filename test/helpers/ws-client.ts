import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

export interface LiveResult<T> {
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
}

/** One subscription over a real WebSocket: every result it receives, in order, and how it ended. */
export interface LiveSubscription<T> {
  results: LiveResult<T>[];
  /** The next result not yet taken, waiting up to timeoutMs for it. */
  next(timeoutMs?: number): Promise<LiveResult<T>>;
  /** Resolves when the server completes the subscription (or it errors). */
  ended: Promise<{ completed: boolean; error?: unknown }>;
  isEnded(): boolean;
  unsubscribe(): void;
}

export interface WsClient {
  client: Client;
  subscribe<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): LiveSubscription<T>;
  dispose(): Promise<void>;
}

const open = new Set<WsClient>();

/** A graphql-ws client (the `ws` package as its WebSocket) on the gateway's /graphql, with `authorization` as connectionParams. */
export function connectWs(gatewayUrl: string, token?: string): WsClient {
  const client = createClient({
    url: `${gatewayUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: true,
  });
  const unsubscribers = new Set<() => void>();
  const ws: WsClient = {
    client,
    subscribe<T>(query: string, variables?: Record<string, unknown>): LiveSubscription<T> {
      const results: LiveResult<T>[] = [];
      const waiters: ((result: LiveResult<T>) => void)[] = [];
      let taken = 0;
      let ended = false;
      let settle!: (outcome: { completed: boolean; error?: unknown }) => void;
      const endedPromise = new Promise<{ completed: boolean; error?: unknown }>((resolve) => (settle = resolve));
      const unsubscribe = client.subscribe<T>(
        { query, variables },
        {
          next(result) {
            const value = result as LiveResult<T>;
            results.push(value);
            const waiter = waiters.shift();
            if (waiter) {
              taken += 1;
              waiter(value);
            }
          },
          error(error) {
            ended = true;
            // A GraphQL error sent as an `error` message arrives here as an array of errors.
            if (Array.isArray(error)) {
              const value = { errors: error } as LiveResult<T>;
              results.push(value);
              const waiter = waiters.shift();
              if (waiter) {
                taken += 1;
                waiter(value);
              }
            }
            settle({ completed: false, error });
          },
          complete() {
            ended = true;
            settle({ completed: true });
          },
        },
      );
      unsubscribers.add(unsubscribe);
      return {
        results,
        ended: endedPromise,
        isEnded: () => ended,
        unsubscribe() {
          unsubscribers.delete(unsubscribe);
          unsubscribe();
        },
        next(timeoutMs = 5_000) {
          if (taken < results.length) return Promise.resolve(results[taken++]!);
          return new Promise<LiveResult<T>>((resolve, reject) => {
            const timer = setTimeout(() => {
              waiters.splice(waiters.indexOf(deliver), 1);
              reject(new Error(`no subscription result within ${timeoutMs} ms (received so far: ${JSON.stringify(results)})`));
            }, timeoutMs);
            const deliver = (result: LiveResult<T>): void => {
              clearTimeout(timer);
              resolve(result);
            };
            waiters.push(deliver);
          });
        },
      };
    },
    async dispose() {
      open.delete(ws);
      for (const unsubscribe of unsubscribers) unsubscribe();
      unsubscribers.clear();
      await client.dispose();
    },
  };
  open.add(ws);
  return ws;
}

/** For afterEach: closes every client a test opened, whether or not the test got to do it. */
export async function disposeWsClients(): Promise<void> {
  await Promise.allSettled([...open].map((ws) => ws.dispose()));
}

/** What one operation over a browser-like socket came to: its result, or how the gateway closed the socket. */
export interface BrowserSocketOutcome {
  data?: unknown;
  errors?: unknown;
  closeCode?: number;
  closeReason?: string;
}

/** One query over a WebSocket whose upgrade carries these headers (Origin, Cookie), as a browser on that origin opens it. */
export async function queryOverBrowserSocket(
  gatewayUrl: string,
  query: string,
  headers: Record<string, string>,
  connectionParams: Record<string, unknown> = {},
): Promise<BrowserSocketOutcome> {
  class BrowserLikeSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers });
    }
  }
  let closed: { code: number; reason: string } | undefined;
  const client = createClient({
    url: `${gatewayUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: BrowserLikeSocket,
    connectionParams,
    retryAttempts: 0,
    lazy: true,
    on: { closed: (event) => (closed = event as { code: number; reason: string }) },
  });
  try {
    return await new Promise<BrowserSocketOutcome>((resolve) => {
      let result: BrowserSocketOutcome = {};
      client.subscribe(
        { query },
        {
          next: (value) => (result = value as BrowserSocketOutcome),
          error: () => resolve({ ...result, closeCode: closed?.code, closeReason: closed?.reason }),
          complete: () => resolve(result),
        },
      );
    });
  } finally {
    await client.dispose();
  }
}
