import { connect, type Socket } from 'node:net';

/**
 * One read buffer for every subscriber socket of the process (net's `onread`): each read is handled synchronously
 * before the next is made, so a read costs no Buffer of its own. A reader copies the bytes it keeps past a read.
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

export interface SubscriberSocketEvents {
  connected(): void;
  /** Bytes as they arrive: a view of the shared read buffer, valid during the call only. */
  read(bytes: Buffer): void;
  failed(what: string): void;
  closed(): void;
}

/** A bench subscriber's TCP connection to `url`, with Nagle off, and a promise that resolves once it is closed. */
export function connectSubscriber(url: URL, events: SubscriberSocketEvents): { socket: Socket; ended: Promise<void> } {
  const socket = connect({
    host: url.hostname,
    port: Number(url.port || 80),
    noDelay: true,
    onread: {
      buffer: READ_BUFFER,
      // Never false, which would pause the socket: a reader ignores what it no longer wants instead.
      callback: (bytes: number) => {
        events.read(READ_BUFFER.subarray(0, bytes));
        return true;
      },
    },
  });
  socket.once('connect', () => events.connected());
  socket.on('error', (error) => events.failed(`socket error: ${error.message}`));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.once('close', () => events.closed());
  return { socket, ended };
}
