import type { IncomingMessage } from 'node:http';
import { CloseCode, handleProtocols, makeServer, type ServerOptions } from 'graphql-ws';
import { WebSocket, type RawData, type WebSocketServer } from 'ws';
import type { Principal } from '../access/principal';
import type { Logger } from '../observability/logger';
import { FAST_FAN_OUT, type FanOut } from './fan-out';
import { wsInternalsAsExpected } from './next-frame';

/** The upgrade request's headers the server reads later (origin check, cookie sign-in, own page); not the request. */
export interface UpgradeHeaders {
  readonly cookie?: string;
  readonly origin?: string;
  readonly host?: string;
}

/**
 * One WebSocket as graphql-ws sees it: both the socket it talks through and the `extra` its hooks get. It holds
 * only what the gateway needs after the upgrade, so an idle subscriber does not keep its upgrade request (its
 * headers, raw header list and stream state) alive for the life of the socket, as graphql-ws's own `useServer` does.
 */
export class SocketConnection {
  /** Resolved once, on the connection's first operation (its credentials cannot change while it is open). */
  principal: Promise<Principal> | undefined;
  /** graphql-ws's handler of this socket's messages, and what it runs once the socket has closed. */
  private received: ((data: string) => Promise<void>) | undefined;
  closed: ((code: number, reason: string) => Promise<void>) | undefined;
  /** Until when connection_init may arrive (epoch ms); 0 once it has (see InitDeadlines). */
  initDeadline = 0;
  /** Sent a ping and heard no pong since (see KeepAlive). */
  awaitingPong = false;
  /** Its slot in the keep-alive wheel. */
  slot = 0;

  constructor(
    readonly socket: WebSocket,
    readonly headers: UpgradeHeaders,
    /** The upgraded TCP socket, which the WebSocket keeps anyway. */
    private readonly stream: { readonly remoteAddress?: string },
    /** The fan-out's way of writing a message past ws, or of declining to (FanOut.writeText). */
    private readonly writeText: FanOut['writeText'],
  ) {}

  /** The peer's address, read when asked (a system call): only callers not signed in are limited by it. */
  get remoteAddress(): string | undefined {
    return this.stream.remoteAddress;
  }

  get protocol(): string {
    return this.socket.protocol;
  }

  /**
   * Resolves once the frame is handed to the socket, which keeps frames in order; a write that fails closes the
   * socket (ws's own error handling), as a failed ws.send would.
   */
  send(data: string): Promise<void> {
    if (this.socket.readyState !== WebSocket.OPEN || this.writeText(this.socket, data)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.socket.send(data, (error) => (error ? reject(error) : resolve()));
    });
  }

  close(code: number, reason: string): void {
    this.socket.close(code, reason);
  }

  onMessage(handler: (data: string) => Promise<void>): void {
    this.received = handler;
  }

  receive(data: string): Promise<void> | undefined {
    return this.received?.(data);
  }
}

export interface WsTransportOptions {
  logger: Logger;
  /** Close reasons of internal errors say only "Internal server error" (production), or the error's message. */
  production: boolean;
  /** How often each socket is pinged; one that has not answered the previous ping by then is terminated. */
  keepAliveMs?: number;
  /** How long a socket may take to send connection_init before it is closed (4408), as graphql-ws's default. */
  connectionInitWaitMs?: number;
  /** How messages reach the sockets: the fast paths (the default) or ws's own send (FAST_PATHS=off). */
  fanOut?: FanOut;
}

/**
 * graphql-ws's protocol server (`makeServer`, which keeps the protocol's rules: connection_init, ack, ping/pong,
 * subscribe, complete, close codes) on a `ws` server, in place of graphql-ws's `useServer`. The difference is the
 * state each socket costs while it idles: no upgrade request; one keep-alive timer and one connection_init timer
 * for all sockets, instead of an interval, a pong timer and an init timer each; listeners shared by every socket.
 */
export function serveGraphqlWs(
  options: ServerOptions<Record<string, unknown>, SocketConnection>,
  wsServer: WebSocketServer,
  transport: WsTransportOptions,
): { dispose(): Promise<void> } {
  const initDeadlines = new InitDeadlines(transport.connectionInitWaitMs ?? 3_000);
  const server = makeServer({
    ...options,
    // graphql-ws would keep a timer per socket for as long as the socket lives; InitDeadlines does its job.
    connectionInitWaitTimeout: 0,
    onConnect: (ctx) => {
      initDeadlines.initialised(ctx.extra);
      return options.onConnect?.(ctx);
    },
  });
  wsServer.options.handleProtocols = handleProtocols;
  const connections = new WeakMap<WebSocket, SocketConnection>();
  const keepAlive = new KeepAlive(transport.keepAliveMs ?? 12_000);
  const fanOut = transport.fanOut ?? FAST_FAN_OUT;
  let internalsChecked = fanOut !== FAST_FAN_OUT;
  const internalError = (socket: WebSocket, error: unknown, what: string): void => {
    transport.logger.error({ err: error }, what);
    const message = error instanceof Error ? error.message : String(error);
    // A close reason is at most 123 bytes.
    socket.close(CloseCode.InternalServerError, transport.production || Buffer.byteLength(message) > 123 ? 'Internal server error' : message);
  };

  // Shared by every socket: `this` is the socket that emitted.
  function onMessage(this: WebSocket, data: RawData): void {
    const connection = connections.get(this);
    connection?.receive(String(data))?.catch((error: unknown) => internalError(this, error, 'graphql-ws: an internal error while handling a message'));
  }
  function onPong(this: WebSocket): void {
    const connection = connections.get(this);
    if (connection) connection.awaitingPong = false;
  }
  function onError(this: WebSocket, error: Error): void {
    internalError(this, error, 'graphql-ws: an internal error on a WebSocket');
  }
  function onClose(this: WebSocket, code: number, reason: Buffer): void {
    const connection = connections.get(this);
    if (!connection) return;
    keepAlive.remove(connection);
    initDeadlines.initialised(connection);
    connections.delete(this);
    connection.closed?.(code, String(reason)).catch((error: unknown) => transport.logger.error({ err: error }, 'graphql-ws: an error while closing'));
  }

  wsServer.on('error', (error) => {
    // ws passes on the HTTP server's errors: one before it listens is a failed listen, reported by whoever listened.
    if (!wsServer.options.server?.listening) return;
    transport.logger.error({ err: error }, 'graphql-ws: an internal error on the WebSocket server');
    for (const client of wsServer.clients) client.close(CloseCode.InternalServerError, 'Internal server error');
  });
  wsServer.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    const { cookie, origin, host } = request.headers;
    const connection = new SocketConnection(socket, { cookie, origin, host }, request.socket, fanOut.writeText);
    if (!internalsChecked) {
      internalsChecked = true;
      // next-frame.ts then sends every frame through ws (it checks each time); this says why the fast path is gone.
      if (!wsInternalsAsExpected(socket)) transport.logger.warn(WS_INTERNALS_CHANGED);
    }
    connections.set(socket, connection);
    // `on`, not `once`: each `once` costs the socket a wrapper object and a bound function; ws emits close once.
    socket.on('error', onError);
    socket.on('message', onMessage);
    socket.on('pong', onPong);
    socket.on('close', onClose);
    connection.closed = server.opened(connection, connection);
    keepAlive.add(connection);
    initDeadlines.add(connection);
  });
  return {
    async dispose() {
      keepAlive.stop();
      initDeadlines.stop();
      for (const client of wsServer.clients) client.close(1001, 'Going away');
      wsServer.removeAllListeners();
      await new Promise<void>((resolve, reject) => wsServer.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** Logged once when the first socket lacks the private fields next-frame.ts reads. */
export const WS_INTERNALS_CHANGED =
  'ws no longer has the private fields (_socket, _sender._state, _sender._queue) the WebSocket fast path reads: every frame goes through ws.send. ' +
  'Re-check src/platform/live/next-frame.ts against the installed ws, or set FAST_PATHS=off.';

/**
 * Pings every socket once per period and terminates one that did not answer the previous ping, with one timer
 * for all of them: the sockets sit in as many slots as there are ticks per period, and each tick serves one slot,
 * so pings are spread over the period as sockets arrived rather than sent all at once.
 */
class KeepAlive {
  private static readonly SLOTS = 12;
  private readonly slots: Set<SocketConnection>[] = Array.from({ length: KeepAlive.SLOTS }, () => new Set());
  private tick = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly periodMs: number) {}

  add(connection: SocketConnection): void {
    if (!(this.periodMs > 0 && Number.isFinite(this.periodMs))) return;
    // The slot served last: this socket's first ping comes one whole period from now.
    connection.slot = (this.tick + KeepAlive.SLOTS - 1) % KeepAlive.SLOTS;
    this.slots[connection.slot]!.add(connection);
    this.timer ??= setInterval(() => this.serve(), this.periodMs / KeepAlive.SLOTS).unref();
  }

  remove(connection: SocketConnection): void {
    this.slots[connection.slot]?.delete(connection);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private serve(): void {
    const slot = this.slots[this.tick]!;
    this.tick = (this.tick + 1) % KeepAlive.SLOTS;
    for (const connection of slot) {
      const { socket } = connection;
      if (socket.readyState !== WebSocket.OPEN) continue;
      if (connection.awaitingPong) {
        socket.terminate();
        continue;
      }
      connection.awaitingPong = true;
      socket.ping();
    }
  }
}

/**
 * Closes a socket that has not sent connection_init within the wait (4408, graphql-ws's code and reason), with one
 * timer for all sockets still waiting, running only while some are: checked every tenth of the wait, so a socket
 * is closed between 1 and 1.1 times the wait after it opened.
 */
class InitDeadlines {
  private readonly waiting = new Set<SocketConnection>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly waitMs: number) {}

  add(connection: SocketConnection): void {
    if (!(this.waitMs > 0 && Number.isFinite(this.waitMs))) return;
    connection.initDeadline = Date.now() + this.waitMs;
    this.waiting.add(connection);
    this.timer ??= setInterval(() => this.sweep(), Math.max(this.waitMs / 10, 10)).unref();
  }

  initialised(connection: SocketConnection): void {
    connection.initDeadline = 0;
    if (this.waiting.delete(connection) && this.waiting.size === 0) this.stop();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private sweep(): void {
    const now = Date.now();
    // Sockets are added in the order they opened, so the first one not yet due ends the sweep.
    for (const connection of this.waiting) {
      if (connection.initDeadline > now) break;
      this.initialised(connection);
      connection.close(CloseCode.ConnectionInitialisationTimeout, 'Connection initialisation timeout');
    }
  }
}
