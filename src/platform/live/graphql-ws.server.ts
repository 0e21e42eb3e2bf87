import type { Server } from 'node:http';
import { type WebSocket, WebSocketServer } from 'ws';
import type { OperationContext } from '../graphql/operation-context';
import type { OperationPipeline } from '../graphql/operation-pipeline';
import { FOREIGN_ORIGIN_REASON, type WebSocketOriginPolicy } from './websocket-origin';
import type { FanOut } from './fan-out';
import type { DirectDelivery } from './shared-subscribe';
import { nextPrefix, writeNext } from './next-frame';
import type { Logger } from '../observability/logger';
import type { WsOperationGuard } from './ws-operation-guard';
import { serveGraphqlWs } from './ws-transport';

export interface GraphqlWsOptions {
  /** The stages every operation goes through, the same as over HTTP (src/platform/graphql/operation-pipeline.ts). */
  pipeline: OperationPipeline;
  /** The operations' hooks: the stage list run for each (ws-operation-guard.ts). */
  operations: WsOperationGuard;
  logger: Logger;
  /** The largest message accepted, as for an HTTP body; a larger one closes the socket (1009). */
  maxPayloadBytes: number;
  /** Which connections may sign in with the session cookie (cross-site WebSocket hijacking). */
  originPolicy: WebSocketOriginPolicy;
  /** Internal errors close a socket with a generic reason, not the error's message. */
  production: boolean;
  /** How an event's result reaches the subscribers: the fast paths, or the ordinary path (FAST_PATHS=off). */
  fanOut: FanOut;
}

/**
 * graphql-ws on the HTTP server's port and path (/graphql), a thin adapter: the socket's own concerns here (its
 * origin, its size limit, the fan-out's direct writes to it), every operation's through the stage list
 * (ws-operation-guard.ts, operation-stages.ts), as Hive Gateway's graphql-ws options sit over one envelop
 * pipeline. Credentials come from `connectionParams.authorization` (`Bearer <session token or merchant key>`, or
 * the session cookie of the upgrade request); an operation that needs a principal it does not have fails with
 * UNAUTHENTICATED or FORBIDDEN as a GraphQL error on that operation, and the socket stays open for others.
 */
export function startGraphqlWs(server: Server, options: GraphqlWsOptions): { dispose(): Promise<void> } {
  const { pipeline, fanOut } = options;
  const wsServer = new WebSocketServer({ server, path: '/graphql', maxPayload: options.maxPayloadBytes });
  const hooks = options.operations.hooks();
  const cleanup = serveGraphqlWs(
    {
      ...hooks,
      schema: pipeline.schema,
      subscribe: fanOut.subscribe,
      onConnect: (ctx) => {
        if (options.originPolicy.admits(ctx.extra.headers, ctx.connectionParams)) return true;
        options.logger.warn({ origin: ctx.extra.headers.origin }, 'WebSocket refused: session cookie from a foreign origin');
        ctx.extra.socket.close(4403, FOREIGN_ORIGIN_REASON);
        return false;
      },
      context: (ctx, id) => {
        const context = options.operations.contextFor(ctx, id);
        fanOut.deliverDirectly(context, directSender(ctx.extra.socket, id, context));
        return context;
      },
    },
    wsServer,
    { logger: options.logger, production: options.production, fanOut },
  );
  return {
    async dispose() {
      await cleanup.dispose();
      await new Promise<void>((resolve) => wsServer.close(() => resolve()));
    },
  };
}

/**
 * A graphql-ws `next` message for operation `id`, written as is; its JSON has graphql-ws's field order. Not while
 * the operation has a bank connection's failure to report: onNext adds those to the result.
 */
function directSender(socket: WebSocket, id: string, context: OperationContext): DirectDelivery {
  const prefix = nextPrefix(id);
  const prefixBytes = Buffer.byteLength(prefix);
  return (shared) => context.partialFailures.length === 0 && writeNext(socket, prefix, prefixBytes, shared);
}
