import { createServer, type ServerResponse } from 'node:http';
import { listenOnLoopback } from '../lib/loopback-server';
import { runChild } from './child.runtime';

export interface StreamFloorInit {
  transport: 'sse' | 'multipart';
}

export interface FanOutArgs {
  /** The result every subscriber gets, as bankgraph sends it: `{ data: { refundUpdated: { id, status } } }`. */
  result: unknown;
}

/**
 * The floor of a fan-out over HTTP streams: a plain node:http server that holds every subscriber's response open
 * and, when told, writes one event's bytes, framed as bankgraph frames them (an SSE `next` event, or a multipart part
 * and its boundary), encoded once, to every response. No GraphQL, no registry, no caps, no heartbeats: what
 * bankgraph spends beyond this per message is what its own fan-out costs. `state` sets the first message a new
 * subscriber gets (bankgraph's current state), `fanOut` writes an event to all, `reset` drops them.
 */
runChild(async (init) => {
  const { transport } = init as StreamFloorInit;
  const open = new Set<ServerResponse>();
  const frame = (result: unknown): Buffer =>
    Buffer.from(
      transport === 'sse'
        ? `event: next\ndata: ${JSON.stringify(result)}\n\n`
        : `\r\ncontent-type: application/json; charset=utf-8\r\n\r\n${JSON.stringify({ payload: result })}\r\n--graphql`,
    );
  let current = frame({ data: null });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, {
        'content-type': transport === 'sse' ? 'text/event-stream; charset=utf-8' : 'multipart/mixed;boundary="graphql";subscriptionSpec="1.0"',
        'cache-control': 'no-cache',
      });
      res.write(transport === 'sse' ? ':\n\n' : '\r\n--graphql');
      res.write(current);
      open.add(res);
      res.once('close', () => open.delete(res));
    });
  });
  const { url, close } = await listenOnLoopback(server);
  return {
    info: { url },
    async call(method, args) {
      switch (method) {
        case 'state':
          current = frame((args as FanOutArgs).result);
          return null;
        case 'fanOut': {
          const bytes = frame((args as FanOutArgs).result);
          for (const res of open) res.write(bytes);
          return open.size;
        }
        case 'reset':
          for (const res of open) res.destroy();
          open.clear();
          return null;
        default:
          throw new Error(`unknown operation ${method}`);
      }
    },
    close: async () => {
      for (const res of open) res.destroy();
      await close();
    },
  };
});
