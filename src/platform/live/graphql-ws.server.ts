import type { Server } from 'node:http';
import { getOperationAST, type ExecutionArgs } from 'graphql';
import type { ServerOptions } from 'graphql-ws';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Principal } from '../access/principal';
import { operationDeadline } from '../provider/operation-deadline';
import { newRequestId, type OperationContext } from '../graphql/operation-context';
import type { OperationPipeline, OperationResults } from '../graphql/operation-pipeline';
import { FOREIGN_ORIGIN_REASON, type WebSocketOriginPolicy } from './websocket-origin';
import type { FanOut } from './fan-out';
import type { DirectDelivery } from './shared-subscribe';
import { nextPrefix, writeNext } from './next-frame';
import type { Logger } from '../observability/logger';
import { outcomeOf } from '../observability/operation-recorder';
import { traceOperationResults } from '../observability/operation-span';
import type { Telemetry } from '../observability/telemetry';
import { serveGraphqlWs, type SocketConnection } from './ws-transport';

export interface GraphqlWsOptions {
  /** The stages every operation goes through, the same as over HTTP (src/platform/graphql/operation-pipeline.ts). */
  pipeline: OperationPipeline;
  /** The request context of one operation (a query, a mutation, or a subscription for its whole life). */
  createContext(principal: Principal, requestId: string): OperationContext;
  /** The connection's principal when no guard resolved it (credentials from connectionParams or the upgrade's cookie). */
  resolvePrincipal(credentials: { authorization?: string; cookie?: string }): Promise<Principal>;
  logger: Logger;
  /** The largest message accepted, as for an HTTP body; a larger one closes the socket (1009). */
  maxPayloadBytes: number;
  /** The deadline of each query and mutation, as over HTTP; a subscription lives as long as its client wants. */
  operationTimeoutMs: number;
  /** Which connections may sign in with the session cookie (cross-site WebSocket hijacking). */
  originPolicy: WebSocketOriginPolicy;
  /** Internal errors close a socket with a generic reason, not the error's message. */
  production: boolean;
  /** Queries and mutations over the socket get an operation span, as over HTTP. */
  telemetry?: Telemetry;
  /** How an event's result reaches the subscribers: the fast paths, or the ordinary path (FAST_PATHS=off). */
  fanOut: FanOut;
  /** Wraps these graphql-ws options with the rate limit, persisted documents, cost limit, caps and the operation record (ws-operation-guard.ts). */
  wrap?(options: ServerOptions<Record<string, unknown>, SocketConnection>): ServerOptions<Record<string, unknown>, SocketConnection>;
}

/**
 * graphql-ws on the HTTP server's port and path (/graphql), its operations run through the operation pipeline as
 * HTTP's are (Hive Gateway's graphql-ws options over one envelop pipeline are the model): the pipeline's document
 * cache parses and validates, its compiled executor runs queries and mutations, and its error stage masks, adds
 * the bank connections' partial failures and the request id. Credentials come from `connectionParams.authorization`
 * (`Bearer <session token or merchant key>`, or the session cookie of the upgrade request) and are resolved for
 * every operation, so a subscription that needs a principal it does not have fails with UNAUTHENTICATED or
 * FORBIDDEN as a GraphQL error on that subscription, and the socket stays open for others.
 */
export function startGraphqlWs(server: Server, options: GraphqlWsOptions): { dispose(): Promise<void> } {
  const { pipeline } = options;
  const wsServer = new WebSocketServer({ server, path: '/graphql', maxPayload: options.maxPayloadBytes });
  const wrap = options.wrap ?? ((serverOptions) => serverOptions);
  const traced = options.telemetry?.enabled ? tracedExecute(options.telemetry, pipeline) : undefined;
  const { fanOut } = options;
  const cleanup = serveGraphqlWs(
    wrap({
      schema: pipeline.schema,
      // Queries and mutations only (subscriptions go through `subscribe`): each gets its deadline as it starts.
      execute: (args) => {
        const context = args.contextValue as OperationContext | undefined;
        if (context) context.deadline = operationDeadline(options.operationTimeoutMs);
        return traced ? traced(args) : pipeline.execute(args);
      },
      subscribe: fanOut.subscribe,
      onConnect: (ctx) => {
        if (options.originPolicy.admits(ctx.extra.headers, ctx.connectionParams)) return true;
        options.logger.warn({ origin: ctx.extra.headers.origin }, 'WebSocket refused: session cookie from a foreign origin');
        ctx.extra.socket.close(4403, FOREIGN_ORIGIN_REASON);
        return false;
      },
      onSubscribe: (_ctx, _id, payload) => {
        const prepared = pipeline.prepare(payload.query, payload.operationName, payload.variables);
        return 'errors' in prepared ? prepared.errors : prepared.args;
      },
      context: async (ctx, id) => {
        // The guard (wrap) resolves the connection's principal on its first operation; without it, resolved here.
        const authorization = typeof ctx.connectionParams?.authorization === 'string' ? ctx.connectionParams.authorization : undefined;
        const principal = await (ctx.extra.principal ?? options.resolvePrincipal({ authorization, cookie: ctx.extra.headers.cookie }));
        const context = options.createContext(principal, newRequestId());
        fanOut.deliverDirectly(context, directSender(ctx.extra.socket, id, context));
        return context;
      },
      onNext: (_ctx, _id, _payload, args, result) => {
        const sent = pipeline.clientResult(result, args.contextValue as OperationContext | undefined);
        return sent === result ? undefined : (sent as typeof result);
      },
      onError: (_ctx, _id, _payload, errors) => errors.map((error) => pipeline.maskError(error.toJSON(), error)),
    }),
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
 * The pipeline's execute inside an operation span, open until the operation's last payload (@defer, @stream) or
 * the client's going. Subscriptions have none: a span open for a subscription's lifetime would be hours long;
 * their events show as `live deliver` spans instead.
 */
function tracedExecute(telemetry: Telemetry, pipeline: OperationPipeline): (args: ExecutionArgs) => Promise<OperationResults> {
  return (args) => {
    const operation = getOperationAST(args.document, args.operationName);
    const requestId = (args.contextValue as OperationContext | undefined)?.requestId;
    const named = { operationName: operation?.name?.value, operationType: operation?.operation };
    return traceOperationResults(telemetry, 'ws', requestId, named, outcomeOf, () => pipeline.execute(args));
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
