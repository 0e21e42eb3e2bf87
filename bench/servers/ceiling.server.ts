import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runChild } from './child.runtime';

export interface CeilingInit {
  /** bankgraph's answer to the warm query, byte for byte. */
  body: string;
  contentType: string;
}

/**
 * The ceiling: a plain node:http server that reads the request and answers with bankgraph's bytes. No GraphQL, no
 * auth, no cache lookup: whatever bankgraph does beyond this is its overhead.
 */
runChild(async (init) => {
  const { body, contentType } = init as CeilingInit;
  const bytes = Buffer.from(body, 'utf8');
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': contentType, 'content-length': bytes.length });
      res.end(bytes);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    info: { url: `http://127.0.0.1:${port}` },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
});
