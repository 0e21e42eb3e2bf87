import { createServer } from 'node:net';

/**
 * A port nothing listens on right now, for a gateway whose address must be known before it starts (PUBLIC_URL's
 * default, `http://localhost:$PORT`, is only made for a fixed PORT).
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
