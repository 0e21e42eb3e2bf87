import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ListeningServer {
  url: string;
  /** Drops every connection first, so closing never waits for a load generator's keep-alive sockets. */
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 at a port the system picks: the ceiling, the floor and the webhook relay. */
export async function listenOnLoopback(server: Server): Promise<ListeningServer> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
