import type { Server } from 'node:http';
import {
  execute,
  getOperationAST,
  GraphQLError,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import type { ServerOptions } from 'graphql-ws';
import { type WebSocket, WebSocketServer } from 'ws';
import { operationDeadline } from '../provider/operation-deadline';
import { createContext, formatPartialFailure, newRequestId, type GatewayContext } from '../graphql/operation-context';
import type { Services } from '../../app/services';
import { FOREIGN_ORIGIN_REASON, type WebSocketOriginPolicy } from './websocket-origin';
import { BoundedMap } from '../store/bounded-map';
import { deliverDirectly, sharedSubscribe, type DirectDelivery } from './shared-subscribe';
import { nextPrefix, writeNext } from './next-frame';
import { outcomeOf } from '../observability/operation-recorder';
import { annotateOperation, traceOperation } from '../observability/operation-span';
import type { Telemetry } from '../observability/telemetry';
import { serveGraphqlWs, type SocketConnection } from './ws-transport';

export interface GraphqlWsOptions {
  schema: GraphQLSchema;
  services: Services;
  /** Added to GraphQL's own rules, exactly as Apollo is given them for HTTP. */
  validationRules: readonly ValidationRule[];
  /** The largest message accepted, as for an HTTP body; a larger one closes the socket (1009). */
  maxPayloadBytes: number;
  /** The deadline of each query and mutation, as over HTTP; a subscription lives as long as its client wants. */
  operationTimeoutMs: number;
  /** The HTTP side's error masking, so a WebSocket client sees the same errors. */
  maskError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError;
  /** Which connections may sign in with the session cookie (cross-site WebSocket hijacking). */
  originPolicy: WebSocketOriginPolicy;
  /** Internal errors close a socket with a generic reason, not the error's message. */
  production: boolean;
  /** Queries and mutations over the socket get an operation span, as over HTTP. */
  telemetry?: Telemetry;
  /** Wraps these graphql-ws options with the rate, token and cost limits, logging and metrics (src/platform/live/ws-operation-guard.ts). */
  wrap?(options: ServerOptions<Record<string, unknown>, SocketConnection>): ServerOptions<Record<string, unknown>, SocketConnection>;
}

/**
 * graphql-ws on the HTTP server's port and path (/graphql). Credentials come from `connectionParams.authorization`
 * (`Bearer <session token or merchant key>`, or the session cookie of the upgrade request) and are resolved for
 * every operation, so a subscription that needs a principal it does not have fails with UNAUTHENTICATED or
 * FORBIDDEN as a GraphQL error on that subscription, and the socket stays open for others. Every operation is
 * parsed and validated with the same rules as over HTTP, and every error masked the same way.
 */
export function startGraphqlWs(server: Server, options: GraphqlWsOptions): { dispose(): Promise<void> } {
  const { schema, services } = options;
  const rules = [...specifiedRules, ...options.validationRules];
  const wsServer = new WebSocketServer({ server, path: '/graphql', maxPayload: options.maxPayloadBytes });
  const wrap = options.wrap ?? ((serverOptions) => serverOptions);
  const traced = options.telemetry?.enabled ? tracedExecute(options.telemetry) : undefined;
  // Parsing and validation depend only on the text (schema and rules are fixed), and clients send the same few
  // operations over and over: each is checked once, and its one immutable document shared by every subscriber.
  const checkedDocuments = new BoundedMap<string, { document: DocumentNode } | { errors: GraphQLError[] }>(200);
  const checkDocument = (query: string): { document: DocumentNode } | { errors: GraphQLError[] } => {
    let checked = checkedDocuments.get(query);
    if (!checked) {
      checked = parseAndValidate(query);
      checkedDocuments.set(query, checked);
    }
    return checked;
  };
  const parseAndValidate = (query: string): { document: DocumentNode } | { errors: GraphQLError[] } => {
    let document: DocumentNode;
    try {
      document = parse(query);
    } catch (error) {
      return { errors: [requestError(error instanceof GraphQLError ? error : new GraphQLError('The operation could not be parsed.'), 'GRAPHQL_PARSE_FAILED')] };
    }
    const errors = validate(schema, document, rules);
    if (errors.length > 0) return { errors: errors.map((error) => requestError(error, 'GRAPHQL_VALIDATION_FAILED')) };
    return { document };
  };
  const cleanup = serveGraphqlWs(
    wrap({
      schema,
      // Queries and mutations only (subscriptions go through `subscribe`): each gets its deadline as it starts.
      execute: (args) => {
        const context = args.contextValue as GatewayContext | undefined;
        if (context) context.deadline = operationDeadline(options.operationTimeoutMs);
        return traced ? traced(args) : execute(args);
      },
      subscribe: sharedSubscribe,
      onConnect: (ctx) => {
        if (options.originPolicy.admits(ctx.extra.headers, ctx.connectionParams)) return true;
        services.logger.warn({ origin: ctx.extra.headers.origin }, 'WebSocket refused: session cookie from a foreign origin');
        ctx.extra.socket.close(4403, FOREIGN_ORIGIN_REASON);
        return false;
      },
      onSubscribe: (_ctx, _id, payload) => {
        const checked = checkDocument(payload.query);
        if ('errors' in checked) return checked.errors;
        const { document } = checked;
        if (!getOperationAST(document, payload.operationName)) {
          return [
            requestError(
              new GraphQLError('The document has no operation of that name (or several operations and no operationName).'),
              'OPERATION_RESOLUTION_FAILURE',
            ),
          ];
        }
        return { schema, document, operationName: payload.operationName, variableValues: payload.variables };
      },
      context: async (ctx, id) => {
        // The guard (wrap) resolves the connection's principal on its first operation; without it, resolved here.
        const authorization = typeof ctx.connectionParams?.authorization === 'string' ? ctx.connectionParams.authorization : undefined;
        const principal = await (ctx.extra.principal ?? services.principals.resolve({ authorization, cookie: ctx.extra.headers.cookie }));
        const context = createContext(services, principal, newRequestId(), 'use');
        deliverDirectly(context, directSender(ctx.extra.socket, id, context));
        return context;
      },
      onNext: (_ctx, _id, _payload, args, result) => {
        const context = args.contextValue as GatewayContext | undefined;
        // A failed bank connection's error joins this result at its path, once (context.ts, reportPartialFailure).
        const partial = context?.partialFailures.splice(0).map(formatPartialFailure) ?? [];
        if (!result.errors && partial.length === 0) return;
        const requestId = context?.requestId;
        const withRequestId = (error: GraphQLFormattedError): GraphQLFormattedError =>
          requestId ? { ...error, extensions: { ...error.extensions, requestId } } : error;
        return {
          ...result,
          errors: [
            ...(result.errors ?? []).map((raw) => {
              // No path: GraphQL refused the request itself (e.g. a variable of the wrong type); a resolver's error has one.
              const error = raw.path === undefined && raw.extensions.code === undefined ? requestError(raw, 'BAD_USER_INPUT') : raw;
              return withRequestId(options.maskError(error.toJSON(), error));
            }),
            ...partial.map(withRequestId),
          ],
        };
      },
      onError: (_ctx, _id, _payload, errors) => errors.map((error) => options.maskError(error.toJSON(), error)),
    }),
    wsServer,
    { logger: services.logger, production: options.production },
  );
  return {
    async dispose() {
      await cleanup.dispose();
      await new Promise<void>((resolve) => wsServer.close(() => resolve()));
    },
  };
}

/**
 * graphql-js's execute inside an operation span. Subscriptions have none: a span open for a subscription's
 * lifetime would be hours long; their events show as `live deliver` spans instead.
 */
function tracedExecute(telemetry: Telemetry): (args: ExecutionArgs) => Promise<ExecutionResult> {
  return (args) => {
    const operation = getOperationAST(args.document, args.operationName);
    const requestId = (args.contextValue as GatewayContext | undefined)?.requestId;
    return traceOperation(telemetry, 'ws', requestId, async (span) => {
      const result = await execute(args);
      const errors = result.errors?.map((error) => error.toJSON());
      annotateOperation({ operationName: operation?.name?.value, operationType: operation?.operation, ...outcomeOf(result.data, errors) }, span);
      return result;
    });
  };
}

/** Tags an error GraphQL raised about the request itself with the code Apollo gives it, for the same masking. */
function requestError(error: GraphQLError, code: string): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    // Kept so masking sees where the error came from, as it does over HTTP.
    originalError: error.originalError,
    extensions: { ...error.extensions, code },
  });
}

/**
 * A graphql-ws `next` message for operation `id`, written as is; its JSON has graphql-ws's field order. Not while
 * the operation has a bank connection's failure to report: onNext adds those to the result.
 */
function directSender(socket: WebSocket, id: string, context: GatewayContext): DirectDelivery {
  const prefix = nextPrefix(id);
  const prefixBytes = Buffer.byteLength(prefix);
  return (shared) => context.partialFailures.length === 0 && writeNext(socket, prefix, prefixBytes, shared);
}
