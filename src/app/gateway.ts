import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer, HeaderMap, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { NoSchemaIntrospectionCustomRule, parse, validate, type GraphQLSchema } from 'graphql';
import { handleAuthRoute } from '../identity/auth.routes';
import { credentialsFromHeaders, type Principal } from '../identity/principal';
import type { ResolvedConfig } from '../platform/config/config';
import { createContext, describePrincipal, formatPartialFailure, type GatewayContext } from '../platform/graphql/operation-context';
import { openDatabase } from '../platform/db/database';
import { operationDeadline } from '../platform/provider/operation-deadline';
import { CompiledExecutor } from '../platform/graphql/compiled-executor';
import { DatabaseLeases } from '../platform/db/database-leases';
import type { CacheMode } from '../platform/provider/response-cache';
import { AnswerCache, type CachedAnswer } from '../platform/http/answer-cache';
import { isAnswerCacheable } from '../platform/graphql/answer-cacheability';
import { PayloadTooLargeError, readBody } from '../platform/http/body';
import { withRequestIdOnErrors } from '../platform/http/request-id-on-errors';
import { requestUrl } from '../platform/http/request-url';
import { sendError } from '../platform/http/respond';
import { createLogger, maskLiterallyIn, type Logger } from '../platform/observability/logger';
import { GatewayMetrics } from '../platform/observability/gateway-metrics';
import { HttpRequestTracker } from '../platform/http/http-request-tracker';
import { operationObserverPlugin } from '../platform/graphql/operation-observer.plugin';
import { OperationRecorder } from '../platform/observability/operation-recorder';
import { handleOpsRoute } from '../platform/observability/ops.routes';
import { Playground } from '../playground/playground.routes';
import { costLimitPlugin } from '../platform/graphql/cost-limit.plugin';
import { httpSubscriptionPlugin } from '../platform/graphql/http-subscription.plugin';
import { createErrorMasker, INTERNAL_ERROR_MESSAGE } from '../platform/graphql/error-masking';
import { HttpOperationGuard } from '../platform/http/http-operation-guard';
import { OperationLimits } from '../platform/graphql/operation-limits';
import { rateLimitKey } from '../platform/http/principal-key';
import { ApqStore } from '../platform/graphql/persisted/apq-store';
import { loadManifest } from '../platform/graphql/persisted/manifest';
import { isOwnPage, PersistedDocuments, type DocumentRequest } from '../platform/graphql/persisted/persisted-documents';
import { createKeyv } from '../platform/store/keyv.factory';
import { GatewayError } from '../platform/errors/gateway-errors';
import { routeLabel } from '../platform/observability/route-label';
import { traceResolvers } from '../platform/observability/resolver-spans';
import { traceOperation } from '../platform/observability/operation-span';
import { SpanKind, SpanStatusCode, Telemetry } from '../platform/observability/telemetry';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { RateLimiter } from '../platform/http/rate-limiter';
import { RedisBuckets } from '../platform/http/redis-buckets';
import { isRedisUrl, RedisConnection } from '../platform/store/redis-connection';
import { WebSocketOriginPolicy } from '../platform/live/websocket-origin';
import { SubscriptionCaps } from '../platform/live/subscription-caps';
import { WsOperationGuard } from '../platform/live/ws-operation-guard';
import { Reconciler } from './reconciler';
import { forgetDataTasksOnRevocation } from '../data-tasks/data-task.revocations';
import { RESOLVERS, resolverContainer } from './resolvers';
import { PaymentResolver, RefundResolver } from '../refunds';
import { VerificationResolver, VerifiedBeneficiaryResolver } from '../beneficiaries';
import { buildGatewaySchema } from '../platform/graphql/build-schema';
import { createServices, type Services, type ServicesOptions } from './services';
import { typeGraphqlPubSub } from '../platform/live/event-bus';
import { startGraphqlWs } from '../platform/live/graphql-ws.server';
import { principalCheck } from '../identity/principal-recheck';
import { PrincipalSockets } from '../platform/live/principal-sockets';

export interface Gateway {
  /** e.g. http://127.0.0.1:4000 — GraphQL at `${url}/graphql`, over HTTP and WebSocket alike. */
  url: string;
  services: Services;
  /** The background repair job (started once listening); tests run a pass with `reconciler.runOnce()`. */
  reconciler: Reconciler;
  close(): Promise<void>;
}

export interface GatewayOptions {
  logger?: Logger;
  /** Prefixes store namespaces and Redis keys and channels (several deployments or test runs on one Redis). */
  keyPrefix?: string;
  /** Webhook and subscription settings (payout watch schedule, webhook limits); defaults suit production. */
  live?: ServicesOptions['live'];
  /** The rate limiter's clock in milliseconds (default performance.now); tests step it instead of sleeping. */
  rateLimitClock?: () => number;
  /** The payout ledger's clock in epoch milliseconds (default Date.now): tests step through 24-hour windows and expiries. */
  payoutClock?: () => number;
  /** Exports this gateway's spans here instead of where OTEL_* says, tracing on (tests read them back). */
  spanExporter?: SpanExporter;
  /** The refund key store's clock in epoch ms (default Date.now); tests step it past the provider's 24 hours. */
  refundClock?: () => number;
}

export async function createGateway(config: ResolvedConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(config.logLevel);
  maskLiterallyIn(logger, [...config.merchantKeys, config.provider.clientSecret, ...(config.metricsToken === undefined ? [] : [config.metricsToken])]);
  const metrics = new GatewayMetrics();
  // Read first: a bad manifest stops start-up before anything is opened.
  const manifest = config.persistedDocuments.manifestPath === undefined ? new Map<string, string>() : loadManifest(config.persistedDocuments.manifestPath);
  const telemetry = await Telemetry.start(config.telemetry, options.spanExporter);
  // Migrations run here, before anything listens: an instance never serves on a schema older than its code.
  const database = await openDatabase(config.storeUrl);
  const services = await createServices(config, logger, database, { metrics, telemetry }, options);
  const schema = await buildGatewaySchema<GatewayContext>({
    resolvers: RESOLVERS,
    pubSub: typeGraphqlPubSub(services.live.bus),
    container: resolverContainer([
      new RefundResolver(services.refunds),
      new PaymentResolver(services.refunds),
      new VerificationResolver(services.beneficiaryService),
      new VerifiedBeneficiaryResolver(services.beneficiaryService),
    ]),
  });
  traceResolvers(schema, telemetry);
  let publicUrl = config.publicUrl;
  const production = config.nodeEnv === 'production';
  // The same limits, masking, rate limiter and log line for HTTP (Apollo) and WebSocket (graphql-ws).
  const limits = new OperationLimits(config.limits, production);
  // With CACHE_URL on Redis, one connection holds the buckets every instance shares.
  const bucketsConnection = isRedisUrl(config.cacheUrl) ? new RedisConnection(config.cacheUrl, 'rate-limit', logger) : undefined;
  const sharedBuckets = bucketsConnection && new RedisBuckets(bucketsConnection, options.keyPrefix ?? '');
  const limiter = rateLimiter(config.rateLimit.perSecond, config.rateLimit.burst);
  const webhookLimiter = rateLimiter(config.rateLimit.webhookPerSecond, config.rateLimit.webhookBurst);
  const maskError = createErrorMasker({ production });
  const recorder = new OperationRecorder(logger, metrics);
  // APQ entries live in the cache backend (CACHE_URL): on Redis, a hash taught to one instance works on all.
  const apqStore =
    config.persistedDocuments.mode === 'allow'
      ? new ApqStore(
          await createKeyv<string>(config.cacheUrl, `${options.keyPrefix ?? ''}apq`),
          (text) => isRunnable(schema, text, limits),
          config.persistedDocuments.apqQuota,
        )
      : undefined;
  const documents = new PersistedDocuments(config.persistedDocuments.mode, manifest, apqStore, config.nodeEnv === 'development');
  const httpGuard = new HttpOperationGuard(limiter, recorder, webhookLimiter);
  const sockets = new PrincipalSockets({
    maxSocketsPerPrincipal: config.live.maxSocketsPerPrincipal,
    recheckMs: config.live.principalRecheckMs,
    check: principalCheck(database, services.sessions),
    revocations: services.revocations,
    logger,
  });
  const caps = new SubscriptionCaps(config.live.maxSubscriptionsPerSocket, config.live.maxSubscriptionsPerPrincipal);
  const wsGuard = new WsOperationGuard({
    schema,
    documents,
    limits,
    limiter,
    recorder,
    metrics,
    logger,
    principals: services.principals,
    sockets,
    revocations: services.revocations,
    caps,
  });
  // A logout, a bank (dis)connected or a revoked user anywhere: this instance remembers the revocation (a principal
  // whose lookup straddled it is not trusted), forgets what it remembered of them, drops the answers it kept for
  // them, and closes their WebSockets (4401), which ends their subscriptions.
  const stopIdentityEvents = await services.identityEvents.listen((event) => {
    services.revocations.heard(event);
    answers.forgetUser(event.userId);
    services.connections.forgetConnections(event.userId);
    if (event.kind === 'connected') return;
    services.sessions.forget(event.kind === 'logout' ? { sessionKey: event.sessionKey } : { userId: event.userId });
    if (event.kind === 'disconnected') services.userTokens.forget(event.connectionId);
    const closed = sockets.close(event);
    if (closed > 0) logger.info({ principal: event.userId, closed, reason: event.kind }, 'closed the WebSockets of a revoked principal');
  });
  const stopDataTaskRevocations = await forgetDataTasksOnRevocation(services.identityEvents, services.live.dataTasks, logger);
  const tracker = new HttpRequestTracker(metrics);
  const answers = new AnswerCache();
  const playground = new Playground({
    sandbox: config.providerKind === 'sandbox',
    appIdentity: config.appIdentity !== undefined,
    session: async (req) => {
      const principal = await services.principals.resolve({ cookie: req.headers.cookie });
      if (principal.kind === 'user') return { signedIn: true, userId: principal.userId };
      return principal.kind === 'invalid' ? { signedIn: false, reason: principal.reason } : { signedIn: false };
    },
  });

  const apollo = new ApolloServer<GatewayContext>({
    gateway: new CompiledExecutor(schema).asGateway(),
    csrfPrevention: true,
    allowBatchedHttpRequests: false,
    introspection: !production,
    // index.ts owns SIGTERM/SIGINT and drains through close(); Apollo's own handlers would stop it mid-request and
    // re-send the signal, killing the process with in-flight requests (its default outside NODE_ENV=test).
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: false,
    // src/persisted resolves hashes before Apollo sees a request, from the manifest and the shared APQ store.
    persistedQueries: false,
    validationRules: limits.validationRules,
    parseOptions: limits.parseOptions,
    formatError: maskError,
    // Apollo's default appends a newline to the JSON, which makes the answer a string of two parts that V8 copies
    // whole into one on its first read: a second copy of the answer (84 KB for the nested query) on every request.
    stringifyResult: (result) => JSON.stringify(result),
    plugins: [
      partialFailuresPlugin(),
      requestIdPlugin(),
      answerCachePlugin(),
      costLimitPlugin<GatewayContext>(limits),
      httpSubscriptionPlugin<GatewayContext>(),
      operationObserverPlugin(recorder, logger),
      // Its per-field hook costs on every field of every answer, for cache hints this gateway does not use.
      ApolloServerPluginCacheControlDisabled(),
    ],
  });
  await apollo.start();

  const httpServer = createServer((req, res) => {
    // Counts the request for /metrics and for draining; during a shutdown it answers 503 itself.
    if (!tracker.begin(req, res)) return;
    const requestId = requestIdOf(req);
    res.setHeader('x-request-id', requestId);
    const routed = telemetry.enabled ? traceRequest(req, res, requestId, () => route(req, res, requestId)) : route(req, res, requestId);
    void routed.catch((error: unknown) => {
      logger.error({ err: error, requestId, url: req.url }, 'request failed');
      if (!res.headersSent) sendError(res, 500, 'INTERNAL_SERVER_ERROR', INTERNAL_ERROR_MESSAGE, requestId);
      else res.destroy();
    });
  });

  /** The request's server span, child of the caller's `traceparent` when it sent one; it ends when the response does. */
  function traceRequest(req: IncomingMessage, res: ServerResponse, requestId: string, handle: () => Promise<void>): Promise<void> {
    const route = routeLabel(req.url);
    return telemetry.span(
      `${req.method ?? 'OTHER'} ${route}`,
      {
        kind: SpanKind.SERVER,
        parent: telemetry.extract(req.headers),
        attributes: { 'http.request.method': req.method ?? 'OTHER', 'http.route': route, 'bankgraph.request_id': requestId },
      },
      async (span) => {
        await handle();
        span?.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) span?.setStatus({ code: SpanStatusCode.ERROR });
      },
    );
  }

  async function route(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const path = requestUrl(req).pathname;
    if (await playground.handle(path, req, res)) return;
    if (path === '/graphql') return graphql(req, res, requestId);
    if (
      await handleOpsRoute(path, req, res, {
        metrics,
        checkReady: () => services.checkReady(),
        isDraining: () => tracker.isDraining,
        metricsToken: config.metricsToken,
        logger,
      })
    )
      return;
    if (path.startsWith('/webhooks/')) {
      if (!(await httpGuard.admitWebhook(req, res, requestId))) return;
      if (await services.live.webhooks.handle(req, res, path, requestId)) return;
    }
    if (path.startsWith('/auth/')) {
      if (!(await httpGuard.admitSignIn(req, res, requestId))) return;
      const handled = await handleAuthRoute(path, req, res, requestId, {
        authUrl: config.provider.authUrl,
        clientId: config.provider.clientId,
        publicUrl: () => publicUrl!,
        production,
        loginStates: services.loginStates,
        sessions: services.sessions,
        connections: services.connections,
        principals: services.principals,
        identityEvents: services.identityEvents,
        auth: services.auth,
        data: services.data,
        logger,
      });
      if (handled) return;
    }
    sendError(res, 404, 'NOT_FOUND', `Nothing at ${path}; GraphQL is at /graphql.`, requestId);
  }

  async function graphql(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const started = performance.now();
    // Resolved before the body is read: the rate limit is per principal, and a refused request costs no more. A
    // revocation heard while the body is read still stops the operation (the context checks again).
    const lookup = services.revocations.begin();
    res.once('close', () => services.revocations.end(lookup));
    const principal = await services.principals.resolve(credentialsFromHeaders(req.headers));
    if (!(await httpGuard.admit(req, res, principal, requestId, started))) return;
    let body: unknown;
    let answerKey: string | undefined;
    let search = requestUrl(req).search;
    if (req.method === 'GET') {
      const params = new URLSearchParams(search);
      const resolved = await resolveDocument({
        query: params.get('query') ?? undefined,
        documentId: params.get('documentId') ?? undefined,
        extensions: jsonOrUndefined(params.get('extensions')),
      });
      if (resolved === false) return;
      search = `?${withDocumentParams(params, resolved)}`;
    }
    if (req.method === 'POST') {
      let raw: Buffer;
      try {
        raw = await readBody(req, config.limits.maxBodyBytes);
      } catch (error) {
        if (error instanceof PayloadTooLargeError) return httpGuard.bodyTooLarge(req, res, principal, requestId, started, error.limitBytes);
        throw error;
      }
      const contentType = req.headers['content-type'] ?? '';
      if (/^application\/(graphql-response\+)?json\b/i.test(contentType) || /^application\/json/i.test(contentType)) {
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          return httpGuard.notJson(req, res, principal, requestId, started);
        }
        if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
          const resolved = await resolveDocument(body as DocumentRequest);
          if (resolved === false) return;
          body = withDocument(body as Record<string, unknown>, resolved);
        }
        // Only JSON POSTs (which CSRF prevention allows) from a signed-in user. One who asked for fresh data is not
        // served a kept answer, but the fresh one replaces it, so a later request never sees older data than this one.
        if (principal.kind === 'user') {
          answerKey = answers.keyFor(principal.userId, raw);
          const cached = cacheModeOf(req) === 'use' ? answers.get(answerKey) : undefined;
          if (cached) return sendCachedAnswer(res, cached, principal, requestId, started);
        }
      } else {
        body = raw.toString('utf8');
      }
    }
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    let context: GatewayContext | undefined;
    // The operation span is active while Apollo runs the operation, so resolver and provider spans are its
    // descendants; the operation observer names it once the operation is known.
    const deadline = operationDeadline(config.operationTimeoutMs);
    const result = await traceOperation(telemetry, 'http', requestId, () =>
      apollo.executeHTTPGraphQLRequest({
        httpGraphQLRequest: { method: req.method ?? 'GET', headers, search, body },
        context: async () => (context = createContext(services, services.revocations.stillTrusted(principal, lookup), requestId, cacheModeOf(req), deadline)),
      }),
    );
    for (const [name, value] of result.headers) res.setHeader(name, value);
    res.statusCode = result.status ?? 200;
    if (result.body.kind === 'complete') {
      const text = withRequestIdOnErrors(result.body.string, requestId);
      // Written as one Buffer, encoded once: a string given to the socket is joined to the response head and
      // encoded there, and past 128 KB (the nested query's answer is about 180 KB) that join is a fresh copy on
      // V8's large-object pages every time (see BENCHMARKS.md, issue 12 session 4).
      const bytes = Buffer.from(text);
      if (answerKey && context?.answer.cacheable && res.statusCode === 200) {
        answers.put(answerKey, {
          operationName: context.answer.operationName,
          headers: [...result.headers],
          body: text === result.body.string ? bytes : Buffer.from(result.body.string),
          freshUntilMs: context.dataFreshUntilMs(),
        });
      }
      res.end(bytes);
      return;
    }
    for await (const chunk of result.body.asyncIterator) res.write(chunk);
    res.end();

    /** The text to run (undefined: none given), or false when the request was refused and answered. */
    async function resolveDocument(request: DocumentRequest): Promise<string | undefined | false> {
      try {
        return await documents.resolve(
          request,
          isOwnPage(req.headers),
          rateLimitKey(principal, () => req.socket.remoteAddress),
        );
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        httpGuard.documentRefused(req, res, principal, requestId, started, error);
        return false;
      }
    }
  }

  function sendCachedAnswer(res: ServerResponse, answer: CachedAnswer, principal: Principal, requestId: string, started: number): void {
    for (const [name, value] of answer.headers) res.setHeader(name, value);
    res.statusCode = 200;
    res.end(answer.body);
    metrics.answerServedFromCache();
    recorder.record({
      requestId,
      principal: describePrincipal(principal),
      transport: 'http',
      operationName: answer.operationName,
      operationType: 'query',
      durationMs: performance.now() - started,
      outcome: 'success',
      status: 200,
      answerCache: 'hit',
    });
  }

  /** Shared buckets count on wall time, which the instances agree on; this process's own on a monotonic clock. */
  function rateLimiter(perSecond: number, burst: number): RateLimiter {
    if (!sharedBuckets) return new RateLimiter(perSecond, burst, undefined, options.rateLimitClock);
    return new RateLimiter(perSecond, burst, undefined, options.rateLimitClock ?? Date.now, sharedBuckets, (error) =>
      logger.warn({ err: error }, 'the rate-limit store (CACHE_URL) failed: limiting per instance until it answers'),
    );
  }

  // Apollo adds the introspection rule itself when introspection is off; graphql-ws needs it spelt out.
  const validationRules = [...limits.validationRules, ...(production ? [NoSchemaIntrospectionCustomRule] : [])];
  const graphqlWs = startGraphqlWs(httpServer, {
    schema,
    services,
    validationRules,
    maxPayloadBytes: config.limits.maxBodyBytes,
    operationTimeoutMs: config.operationTimeoutMs,
    production,
    maskError,
    originPolicy: new WebSocketOriginPolicy(config.allowedOrigins, () => publicUrl),
    telemetry,
    wrap: (serverOptions) => wsGuard.wrap(serverOptions),
  });
  // Upgraded connections, for /metrics (a refused upgrade counts for the instant it lasts).
  // One listener function for every socket (`on`: a socket closes once; `once` would wrap it for each socket).
  const countClosedWebSocket = (): void => metrics.webSocketClosed();
  httpServer.on('upgrade', (_req, socket) => {
    metrics.webSocketOpened();
    socket.on('close', countClosedWebSocket);
  });

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(config.port, config.host, () => resolve());
  });
  const { port } = httpServer.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  publicUrl ??= url;
  services.live.setPublicUrl(publicUrl);
  const reconciler = new Reconciler(services, new DatabaseLeases(database), logger, config.money.reconcileIntervalMs);
  reconciler.start();

  let closing: Promise<void> | undefined;
  return {
    url,
    services,
    reconciler,
    close() {
      closing ??= (async () => {
        // Stop accepting, let in-flight HTTP requests and WebSocket queries finish (up to SHUTDOWN_TIMEOUT_MS),
        // close WebSockets with 1001 Going Away, then the stores.
        const deadline = performance.now() + config.shutdownTimeoutMs;
        const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()));
        tracker.startDraining(httpServer);
        await wsGuard.drain(deadline);
        await graphqlWs.dispose();
        await tracker.drain(httpServer, deadline);
        await closed;
        await apollo.stop();
        await reconciler.close();
        await stopIdentityEvents();
        await stopDataTaskRevocations();
        sockets.stop();
        await services.close();
        await apqStore?.disconnect();
        await bucketsConnection?.close();
        await telemetry.shutdown();
      })();
      return closing;
    },
  };
}

/** A document this gateway would run: it parses within the token limit and passes validation, limits included. */
function isRunnable(schema: GraphQLSchema, text: string, limits: OperationLimits): boolean {
  try {
    return validate(schema, parse(text, limits.parseOptions), limits.allValidationRules).length === 0;
  } catch {
    return false;
  }
}

/** Marks the operations whose answers the AnswerCache may keep: data-API reads only, and only without errors. */
function answerCachePlugin(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operation, contextValue }) {
          contextValue.answer.cacheable = operation !== undefined && isAnswerCacheable(schema, document, operation);
          contextValue.answer.operationName = operation?.name?.value;
        },
        async didEncounterErrors({ contextValue }) {
          contextValue.answer.cacheable = false;
        },
      };
    },
  };
}

/** A bank connection that failed while the others answered: its error joins the answer at its path (context.ts). */
function partialFailuresPlugin(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response, contextValue }) {
          if (response.body.kind !== 'single' || contextValue.partialFailures.length === 0) return;
          const result = response.body.singleResult;
          result.errors = [...(result.errors ?? []), ...contextValue.partialFailures.map(formatPartialFailure)];
        },
      };
    },
  };
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

/** Unreadable JSON reads as absent here; Apollo, which reads the parameter again, refuses it with its own message. */
function jsonOrUndefined(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The request as Apollo should see it: the resolved text as `query`, no hash it would try to resolve again. */
function withDocument(body: Record<string, unknown>, query: string | undefined): Record<string, unknown> {
  const { documentId: _documentId, extensions, ...rest } = body;
  const { persistedQuery: _persistedQuery, ...otherExtensions } = (typeof extensions === 'object' && extensions !== null ? extensions : {}) as Record<
    string,
    unknown
  >;
  return { ...rest, ...(query === undefined ? {} : { query }), ...(Object.keys(otherExtensions).length > 0 ? { extensions: otherExtensions } : {}) };
}

function withDocumentParams(params: URLSearchParams, query: string | undefined): URLSearchParams {
  const rewritten = new URLSearchParams(params);
  rewritten.delete('documentId');
  const extensions = jsonOrUndefined(params.get('extensions'));
  if (extensions !== undefined) {
    const others = withDocument({ extensions }, undefined).extensions;
    if (others === undefined) rewritten.delete('extensions');
    else rewritten.set('extensions', JSON.stringify(others));
  }
  if (query !== undefined) rewritten.set('query', query);
  return rewritten;
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
