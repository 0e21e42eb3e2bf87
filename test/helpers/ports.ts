import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago, for a program that must be told its port (not port 0). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
