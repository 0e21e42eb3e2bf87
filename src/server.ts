import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer, HeaderMap, type ApolloServerPlugin } from '@apollo/server';
import type { GraphQLFormattedError, GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { handleAuthRoute } from './auth/auth.routes';
import { credentialsFromHeaders, resolvePrincipal } from './auth/principal';
import type { ResolvedConfig } from './config';
import { createContext, type GatewayContext } from './context';
import type { CacheMode } from './datasources/response-cache';
import { ERROR_CODES, GatewayError, type ErrorCode } from './errors';
import { PayloadTooLargeError, readBody } from './http/body';
import { sendError, sendJson } from './http/respond';
import { createLogger, type Logger } from './logger';
import { RESOLVERS } from './resolvers';
import { buildGatewaySchema } from './schema/build-schema';
import { createServices, type Services } from './services';

export interface Gateway {
  /** e.g. http://127.0.0.1:4000 — GraphQL at `${url}/graphql`, over HTTP and WebSocket alike. */
  url: string;
  services: Services;
  close(): Promise<void>;
}

export interface GatewayOptions {
  logger?: Logger;
}

/** GraphQL documents are small; a larger body is refused before it is parsed. */
const MAX_GRAPHQL_BODY_BYTES = 100 * 1024;

/** Errors GraphQL itself raises for a malformed request are the client's mistake: BAD_USER_INPUT, with the detail. */
const REQUEST_ERROR_CODES = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST', 'OPERATION_RESOLUTION_FAILURE', 'PERSISTED_QUERY_NOT_SUPPORTED']);

export async function createGateway(config: ResolvedConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const services = createServices(config, logger);
  const schema = await buildGatewaySchema<GatewayContext>({ resolvers: RESOLVERS });
  let publicUrl = config.publicUrl;

  const apollo = new ApolloServer<GatewayContext>({
    schema,
    csrfPrevention: true,
    allowBatchedHttpRequests: false,
    introspection: config.nodeEnv !== 'production',
    includeStacktraceInErrorResponses: false,
    formatError: maskError,
    plugins: [requestIdPlugin()],
  });
  await apollo.start();

  const httpServer = createServer((req, res) => {
    const requestId = requestIdOf(req);
    res.setHeader('x-request-id', requestId);
    void route(req, res, requestId).catch((error: unknown) => {
      logger.error({ err: error, requestId, url: req.url }, 'request failed');
      if (!res.headersSent) sendError(res, 500, 'INTERNAL_SERVER_ERROR', 'Internal error; quote the request id when reporting it.', requestId);
      else res.destroy();
    });
  });

  async function route(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://gateway').pathname;
    if (path === '/graphql') return graphql(req, res, requestId);
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path === '/readyz') return readiness(res);
    if (path.startsWith('/auth/')) {
      const handled = await handleAuthRoute(path, req, res, requestId, {
        authUrl: config.provider.authUrl,
        clientId: config.provider.clientId,
        publicUrl: () => publicUrl!,
        loginStates: services.loginStates,
        sessions: services.sessions,
        auth: services.auth,
        data: services.data,
        logger,
      });
      if (handled) return;
    }
    sendError(res, 404, 'NOT_FOUND', `Nothing at ${path}; GraphQL is at /graphql.`, requestId);
  }

  async function graphql(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    let body: unknown;
    if (req.method === 'POST') {
      let raw: Buffer;
      try {
        raw = await readBody(req, MAX_GRAPHQL_BODY_BYTES);
      } catch (error) {
        if (error instanceof PayloadTooLargeError) return sendError(res, 413, 'BAD_USER_INPUT', `The request body exceeds ${error.limitBytes} bytes.`, requestId);
        throw error;
      }
      const contentType = req.headers['content-type'] ?? '';
      if (/^application\/(graphql-response\+)?json\b/i.test(contentType) || /^application\/json/i.test(contentType)) {
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          return sendError(res, 400, 'BAD_USER_INPUT', 'The request body is not valid JSON.', requestId);
        }
      } else {
        body = raw.toString('utf8');
      }
    }
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const result = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: req.method ?? 'GET', headers, search: new URL(req.url ?? '/', 'http://gateway').search, body },
      context: async () =>
        createContext(services, await resolvePrincipal(credentialsFromHeaders(req.headers), services.merchantKeys, services.sessions), requestId, cacheModeOf(req)),
    });
    for (const [name, value] of result.headers) res.setHeader(name, value);
    res.statusCode = result.status ?? 200;
    if (result.body.kind === 'complete') {
      res.end(result.body.string);
      return;
    }
    for await (const chunk of result.body.asyncIterator) res.write(chunk);
    res.end();
  }

  async function readiness(res: ServerResponse): Promise<void> {
    try {
      await services.checkReady();
      sendJson(res, 200, { status: 'ready' });
    } catch (error) {
      logger.warn({ err: error }, 'not ready');
      sendJson(res, 503, { status: 'unavailable', reason: 'the store or cache is not reachable' });
    }
  }

  const wsServer = new WebSocketServer({ server: httpServer, path: '/graphql' });
  const wsCleanup = useServer<Record<string, unknown>, { context?: GatewayContext }>(
    {
      schema: schema as GraphQLSchema,
      context: async (ctx) => {
        const authorization = typeof ctx.connectionParams?.authorization === 'string' ? ctx.connectionParams.authorization : undefined;
        const principal = await resolvePrincipal({ authorization, cookie: ctx.extra.request.headers.cookie }, services.merchantKeys, services.sessions);
        return createContext(services, principal, randomUUID(), 'use');
      },
    },
    wsServer,
  );

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(config.port, config.host, () => resolve());
  });
  const { port } = httpServer.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  publicUrl ??= url;

  let closing: Promise<void> | undefined;
  return {
    url,
    services,
    close() {
      closing ??= (async () => {
        await wsCleanup.dispose();
        wsServer.close();
        httpServer.closeIdleConnections();
        await new Promise<void>((resolve) => httpServer.close(() => resolve()));
        await apollo.stop();
        await services.close();
      })();
      return closing;
    },
  };

  function maskError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
    const original = (error as { originalError?: unknown }).originalError;
    const known = original instanceof GatewayError ? original : error instanceof GatewayError ? error : undefined;
    if (known) return { ...formatted, message: known.message, extensions: { ...known.extensions } };
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && REQUEST_ERROR_CODES.has(code)) {
      return { ...formatted, extensions: { code: 'BAD_USER_INPUT' satisfies ErrorCode, ...(code === 'BAD_USER_INPUT' ? {} : { reason: code }) } };
    }
    if (typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code)) return formatted;
    logger.error({ err: original ?? error, path: formatted.path }, 'unexpected error in a resolver');
    return {
      message: 'Internal error; quote the request id when reporting it.',
      ...(formatted.path ? { path: formatted.path } : {}),
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      extensions: { code: 'INTERNAL_SERVER_ERROR' satisfies ErrorCode },
    };
  }
}

/** Adds the request id to every error, so a client can quote it and support can find the log lines. */
function requestIdPlugin(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response, contextValue }) {
          if (response.body.kind !== 'single') return;
          const errors = response.body.singleResult.errors;
          if (!errors) return;
          response.body.singleResult.errors = errors.map((error) => ({ ...error, extensions: { ...error.extensions, requestId: contextValue.requestId } }));
        },
      };
    },
  };
}

/** A client's own X-Request-Id is kept when it looks like an id; anything else is replaced, so logs stay clean. */
function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && /^[A-Za-z0-9._-]{8,64}$/.test(given) ? given : randomUUID();
}

/** `Cache-Control: no-cache` (or no-store) on a request skips the response cache for it. */
function cacheModeOf(req: IncomingMessage): CacheMode {
  return /\bno-(cache|store)\b/i.test(req.headers['cache-control'] ?? '') ? 'bypass' : 'use';
}
