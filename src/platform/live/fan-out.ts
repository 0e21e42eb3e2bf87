import { subscribe, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { WebSocket } from 'ws';
import { writeText } from './next-frame';
import { deliverDirectly, sharedSubscribe, type DirectDelivery } from './shared-subscribe';

/**
 * How one event's result for an operation reaches the operation's N subscribers, over every transport: the one
 * seam between the transports (graphql-ws.server.ts, ws-transport.ts, http-streams.ts) and the fan-out's fast
 * paths, chosen once per gateway (FAST_PATHS, docs/scaling.md "Fast paths").
 *
 * `ORDINARY_FAN_OUT` is the reference: each subscriber runs graphql-js's own `subscribe`, and each of its results
 * travels through its stream's iterators and is serialised and sent by its transport's library (graphql-ws and
 * ws.send, graphql-sse, the multipart writer). `FAST_FAN_OUT` must put the same bytes on every subscriber's
 * connection, in the same order (test/integration/fast-paths.test.ts compares them):
 * - an event is executed once per distinct operation and serialised once (shared-subscribe.ts, next-frame.ts);
 * - its error-free result is written from the bus's delivery loop, only while the subscriber's stream has sent
 *   everything before it (`AsyncQueue.isWaiting`) and holding the events that arrive while it waits for the shared
 *   execution (`LiveStream.held`), so nothing overtakes (live-stream.ts);
 * - over SSE and multipart, only while the transport has written every result the stream gave it and the socket
 *   takes more (`DirectWrites`, http-streams.ts); over WebSocket, as a frame written past ws only while ws has
 *   nothing of its own in flight (next-frame.ts, which reads ws 8.23.0's private fields; package.json pins it).
 */
export interface FanOut {
  /** graphql-ws's and the HTTP streams' `subscribe`. */
  subscribe(args: ExecutionArgs): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult>;
  /**
   * Lets the subscriber whose operation context is `contextValue` write its error-free results itself with
   * `deliver`; call before `subscribe`. The ordinary fan-out never does.
   */
  deliverDirectly(contextValue: object, deliver: DirectDelivery): void;
  /** Sends one graphql-ws message written past ws when it can (true); false: the caller sends it through ws. */
  writeText(socket: WebSocket, data: string): boolean;
}

export const ORDINARY_FAN_OUT: FanOut = {
  subscribe: (args) => Promise.resolve(subscribe(args)),
  deliverDirectly: () => undefined,
  writeText: () => false,
};

export const FAST_FAN_OUT: FanOut = {
  subscribe: sharedSubscribe,
  deliverDirectly,
  writeText,
};

/** The fan-out FAST_PATHS asks for. */
export function fanOutFor(fastPaths: boolean): FanOut {
  return fastPaths ? FAST_FAN_OUT : ORDINARY_FAN_OUT;
}
