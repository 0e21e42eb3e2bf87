import { createServer } from 'node:http';
import { listenOnLoopback } from '../lib/loopback-server';
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
  const { url, close } = await listenOnLoopback(server);
  return { info: { url }, close };
});
