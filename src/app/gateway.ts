import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { GraphQLSchema } from 'graphql';
import { principalCheck } from '../identity';
import { credentialsFromHeaders } from '../platform/access/principal';
import type { ResolvedConfig } from '../platform/config/config';
import { openDatabase, type Database } from '../platform/db/database';
import { createApollo, GraphqlHttpHandler, type GraphqlHttpDeps } from '../platform/graphql/http-handler';
import { createOperationContext, type OperationContext } from '../platform/graphql/operation-context';
import { subscriptionStreams } from './streams';
import { OperationLimits } from '../platform/graphql/operation-limits';
import { OperationPipeline } from '../platform/graphql/operation-pipeline';
import { ApqStore } from '../platform/graphql/persisted/apq-store';
import { loadManifest } from '../platform/graphql/persisted/manifest';
import { PersistedDocuments } from '../platform/graphql/persisted/persisted-documents';
import { HttpOperationGuard } from '../platform/http/http-operation-guard';
import { HttpRequestTracker } from '../platform/http/http-request-tracker';
import { createHttpServer } from '../platform/http/http-router';
import { RateLimiter } from '../platform/http/rate-limiter';
import { RedisBuckets } from '../platform/http/redis-buckets';
import { typeGraphqlPubSub } from '../platform/live/event-bus';
import { startGraphqlWs } from '../platform/live/graphql-ws.server';
import { PrincipalSockets } from '../platform/live/principal-sockets';
import { SubscriptionCaps } from '../platform/live/subscription-caps';
import { WebSocketOriginPolicy } from '../platform/live/websocket-origin';
import { WsOperationGuard } from '../platform/live/ws-operation-guard';
import { HttpStreams } from '../platform/live/http-streams';
import { liveStages, OperationStages } from '../platform/live/operation-stages';
import { MultipartSubscriptions } from '../platform/live/multipart-subscriptions';
import { SseHandler } from '../platform/live/sse.server';
import { fanOutFor } from '../platform/live/fan-out';
import { GatewayMetrics } from '../platform/observability/gateway-metrics';
import { createLogger, maskLiterallyIn, type Logger } from '../platform/observability/logger';
import { OperationRecorder } from '../platform/observability/operation-recorder';
import { traceResolvers } from '../platform/observability/resolver-spans';
import { Telemetry } from '../platform/observability/telemetry';
import { createKeyv } from '../platform/store/keyv.factory';
import { isRedisUrl, RedisConnection } from '../platform/store/redis-connection';
import { Playground } from '../playground/playground.routes';
import { gatewayRoutes, type RoutesDeps } from './http-routes';
import { playgroundSession, seededPaymentId } from './playground-session';
import { createMcpEndpoint } from './mcp';
import { registerJobs } from './jobs';
import type { Scheduler } from '../platform/scheduler/scheduler';
import { resolverContainer } from './resolvers';
import { buildAppSchema } from './schema';
import { listenForRevocations } from './revocations';
import type { Clock } from './clock';
import { composeFeatures, type Features } from './features';
import { liveSettingsOf, type LiveSettings } from './live';
import type { Identity } from '../identity';

export interface Gateway {
  /** e.g. http://127.0.0.1:4000 — GraphQL at `${url}/graphql`, over HTTP and WebSocket alike. */
  url: string;
  /** What the gateway is composed of, feature by feature (tests read their stores and watchers). */
  features: Features;
  /** The relational store (STORE_URL). */
  database: Database;
  /** Background work (its passes start once listening); tests run the passes with `scheduler.runOnce()`. */
  scheduler: Scheduler;
  close(): Promise<void>;
}

export interface GatewayOptions {
  logger?: Logger;
  /** Webhook and subscription settings (payout watch schedule, webhook limits) over the configuration's. */
  live?: Partial<LiveSettings>;
  /**
   * The gateway's one clock in epoch milliseconds (default Date.now), for everything that reads the time: rate
   * limits, payout windows and expiries, refund keys, sessions, leases, caches. Tests step it instead of waiting.
   */
  clock?: Clock;
  /** Exports this gateway's spans here instead of where OTEL_* says, tracing on (tests read them back). */
  spanExporter?: SpanExporter;
}

/** What the gateway is made of once its stores are open, before anything listens. */
interface Parts {
  config: ResolvedConfig;
  logger: Logger;
  metrics: GatewayMetrics;
  telemetry: Telemetry;
  database: Database;
  clock: Clock;
  features: Features;
  /** Until listening, the configured PUBLIC_URL (or none); then the listening address when none was configured. */
  publicUrl: { value: string | undefined };
}

export async function createGateway(config: ResolvedConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(config.observability.logLevel);
  maskLiterallyIn(logger, [
    ...config.identity.merchantKeys,
    config.provider.clientSecret,
    ...(config.observability.metricsToken === undefined ? [] : [config.observability.metricsToken]),
  ]);
  const metrics = new GatewayMetrics();
  // Read first: a bad manifest stops start-up before anything is opened.
  const manifest = config.persistedDocuments.manifestPath === undefined ? new Map<string, string>() : loadManifest(config.persistedDocuments.manifestPath);
  const telemetry = await Telemetry.start(config.observability.telemetry, options.spanExporter);
  // Migrations run here, before anything listens: an instance never serves on a schema older than its code.
  const database = await openDatabase(config.store.url);
  const clock = options.clock ?? Date.now;
  const features = await composeFeatures(config, { logger, database, metrics, telemetry, clock, live: { ...liveSettingsOf(config), ...options.live } });
  const { identity, live: events } = features;
  registerJobs(events.scheduler, { payouts: features.payouts.passes, dataTasks: features.dataTasks.passes, refunds: features.refunds.passes });
  const parts: Parts = { config, logger, metrics, telemetry, database, clock, features, publicUrl: { value: config.server.publicUrl } };
  const schema = await buildAppSchema<OperationContext>({
    pubSub: typeGraphqlPubSub(events.bus),
    container: resolverContainer(features),
    streams: subscriptionStreams(features),
  });
  traceResolvers(schema, telemetry);
  const { pipeline, limiters, recorder, apqStore } = await createPipeline(parts, schema, manifest);
  const httpGuard = new HttpOperationGuard(limiters.limiter, recorder, limiters.webhookLimiter);
  const tracker = new HttpRequestTracker(metrics);
  const apollo = createApollo(pipeline, config.server.nodeEnv === 'production');
  await apollo.start();
  const live = createLiveTransport(parts, pipeline, limiters.limiter, recorder);
  const graphql = new GraphqlHttpHandler(apollo, graphqlHttpDeps(parts, pipeline, httpGuard, recorder, live.streams));
  const sse = new SseHandler({
    streams: live.streams,
    guard: httpGuard,
    maxBodyBytes: config.limits.operation.maxBodyBytes,
    lookupPrincipal: lookupPrincipal(identity),
  });
  const publicUrl = (): string => parts.publicUrl.value!;
  const mcpLookup = lookupPrincipal(identity, config.mcp.audience);
  const mcp = createMcpEndpoint({ config, schema, pipeline, graphql, guard: httpGuard, lookupPrincipal: mcpLookup, publicUrl, logger });
  const routes = createRoutes(parts, { graphql, sse, mcp, guard: httpGuard, tracker, publicUrl });
  const httpServer = createHttpServer({ tracker, telemetry, logger, routes });
  const graphqlWs = startLive(parts, httpServer, pipeline, live.guard);
  const stopRevocations = await listenForRevocations({
    identity,
    dataTasks: features.dataTasks.service,
    answers: graphql.answers,
    sockets: live.sockets,
    logger,
  });
  const url = await listen(httpServer, config);
  parts.publicUrl.value ??= url;
  events.setPublicUrl(parts.publicUrl.value);
  events.scheduler.start();

  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    // Stop accepting, let in-flight HTTP requests and WebSocket queries finish (up to SHUTDOWN_TIMEOUT_MS), end
    // the HTTP subscription streams, close WebSockets with 1001 Going Away, then the stores.
    const deadline = performance.now() + config.limits.shutdownTimeoutMs;
    const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()));
    tracker.startDraining(httpServer);
    await live.guard.drain(deadline);
    await live.streams.dispose(deadline);
    await graphqlWs.dispose();
    await tracker.drain(httpServer, deadline);
    await closed;
    await apollo.stop();
    await events.scheduler.close();
    await stopRevocations();
    live.sockets.stop();
    await features.close();
    await apqStore?.disconnect();
    await limiters.connection?.close();
    await telemetry.shutdown();
  };
  return { url, features, database, scheduler: events.scheduler, close: () => (closing ??= close()) };
}

/** The one operation pipeline both transports run, with the rate limiters and the APQ store it is built on. */
async function createPipeline(parts: Parts, schema: GraphQLSchema, manifest: ReadonlyMap<string, string>) {
  const { config, logger, metrics } = parts;
  const production = config.server.nodeEnv === 'production';
  const limits = new OperationLimits(config.limits.operation, production);
  const limiters = createLimiters(config, logger, parts.clock);
  const recorder = new OperationRecorder(logger, metrics);
  // APQ entries live in the cache backend (CACHE_URL): on Redis, a hash taught to one instance works on all. A hash
  // is taught only a document this gateway would run (the pipeline's own parse and validation decide).
  const apqStore =
    config.persistedDocuments.mode === 'allow'
      ? new ApqStore(
          await createKeyv<string>(config.store.cacheUrl, `${config.store.redisKeyPrefix}apq`),
          (text) => 'document' in pipeline.check(text),
          config.persistedDocuments.apqQuota,
          parts.clock,
        )
      : undefined;
  const persisted = new PersistedDocuments(config.persistedDocuments.mode, manifest, apqStore, config.server.nodeEnv === 'development');
  const pipeline: OperationPipeline = new OperationPipeline({ schema, limits, persisted, recorder, logger, production });
  return { pipeline, limiters, recorder, apqStore };
}

/** The caller's rate limiters; with CACHE_URL on Redis, one connection holds the buckets every instance shares. */
function createLimiters(config: ResolvedConfig, logger: Logger, clock: Clock) {
  const connection = isRedisUrl(config.store.cacheUrl) ? new RedisConnection(config.store.cacheUrl, 'rate-limit', logger) : undefined;
  const shared = connection && new RedisBuckets(connection, config.store.redisKeyPrefix, config.limits.rateLimit.storeTimeoutMs);
  // On wall time, which the instances sharing buckets agree on (a bucket never goes back when the clock does).
  const rateLimiter = (perSecond: number, burst: number): RateLimiter =>
    new RateLimiter(perSecond, burst, undefined, clock, shared, (error) =>
      logger.warn({ err: error }, 'the rate-limit store (CACHE_URL) failed: limiting per instance until it answers'),
    );
  return {
    connection,
    limiter: rateLimiter(config.limits.rateLimit.perSecond, config.limits.rateLimit.burst),
    webhookLimiter: rateLimiter(config.limits.rateLimit.webhookPerSecond, config.limits.rateLimit.webhookBurst),
  };
}

function graphqlHttpDeps(
  parts: Parts,
  pipeline: OperationPipeline,
  guard: HttpOperationGuard,
  recorder: OperationRecorder,
  streams: HttpStreams,
): GraphqlHttpDeps {
  const { config, logger } = parts;
  const multipart = new MultipartSubscriptions(streams);
  return {
    pipeline,
    guard,
    recorder,
    metrics: parts.metrics,
    telemetry: parts.telemetry,
    production: config.server.nodeEnv === 'production',
    maxBodyBytes: config.limits.operation.maxBodyBytes,
    operationTimeoutMs: config.limits.operationTimeoutMs,
    lookupPrincipal: lookupPrincipal(parts.features.identity),
    createContext: (principal, requestId, cacheMode, deadline, agent) => createOperationContext({ principal, agent, requestId, cacheMode, deadline, logger }),
    streamOperation: (req, res, requestId, started, lookup, request) => multipart.serve(req, res, requestId, started, lookup, request),
  };
}

/**
 * The caller of an HTTP request (bearer token, merchant key or session cookie), trusted as far as revocations heard
 * since allow; `audience` is the one an app token must name there instead of AUTH_AUDIENCE (MCP_AUDIENCE on /mcp).
 */
function lookupPrincipal({ revocations, principals }: Pick<Identity, 'revocations' | 'principals'>, audience?: string): GraphqlHttpDeps['lookupPrincipal'] {
  return async (req, res) => {
    const lookup = revocations.begin();
    res.once('close', () => revocations.end(lookup));
    const principal = await principals.resolve(credentialsFromHeaders(req.headers), audience === undefined ? undefined : { audience });
    return { principal, trusted: () => revocations.stillTrusted(principal, lookup), end: () => revocations.end(lookup) };
  };
}

/** Every HTTP route, each given only what it serves from: the features' parts and the settings it reads. */
function createRoutes(parts: Parts, handlers: Pick<RoutesDeps, 'graphql' | 'sse' | 'mcp' | 'guard' | 'tracker' | 'publicUrl'>) {
  const { config, features, logger } = parts;
  const { identity, provider } = features;
  const playground = new Playground({
    sandbox: config.provider.kind === 'sandbox',
    appIdentity: config.identity.app !== undefined,
    session: playgroundSession({ identity, data: provider.data, logger }),
    seededPaymentId: seededPaymentId(config, logger),
  });
  return gatewayRoutes({
    ...handlers,
    corsOrigins: config.server.corsOrigins,
    metricsToken: config.observability.metricsToken,
    readiness: features.readiness,
    webhooks: features.webhooks,
    auth: {
      authUrl: config.provider.authUrl,
      clientId: config.provider.clientId,
      publicUrl: handlers.publicUrl,
      production: config.server.nodeEnv === 'production',
      appOrigins: new Set(config.server.corsOrigins),
      loginStates: identity.loginStates,
      sessions: identity.sessions,
      connections: identity.connections,
      principals: identity.principals,
      identity: identity.service,
      auth: provider.auth,
      data: provider.data,
      logger,
      clock: parts.clock,
    },
    playground,
    metrics: parts.metrics,
    logger,
  });
}

/**
 * What live work shares whatever carries it: the principals' connections (so a revocation closes WebSockets and
 * HTTP streams alike), the subscription caps, the stage list every live operation runs, and its two adapters: the
 * WebSocket guard and the HTTP streams (SSE, multipart).
 */
function createLiveTransport(parts: Parts, pipeline: OperationPipeline, limiter: RateLimiter, recorder: OperationRecorder) {
  const { config, logger, metrics } = parts;
  const { identity } = parts.features;
  const sockets = new PrincipalSockets({
    maxSocketsPerPrincipal: config.live.maxSocketsPerPrincipal,
    recheckMs: config.live.principalRecheckMs,
    check: principalCheck(parts.database, identity.sessions),
    revocations: identity.revocations,
    logger,
  });
  const caps = new SubscriptionCaps(config.live.maxSubscriptionsPerSocket, config.live.maxSubscriptionsPerPrincipal);
  const stageDeps = { pipeline, limiter, caps, recorder, metrics, logger, operationTimeoutMs: config.limits.operationTimeoutMs, telemetry: parts.telemetry };
  const stages = new OperationStages(liveStages(stageDeps), pipeline, logger);
  const guard = new WsOperationGuard({
    pipeline,
    stages,
    principals: identity.principals,
    sockets,
    revocations: identity.revocations,
    createContext: (principal, requestId) => createOperationContext({ principal, requestId, cacheMode: 'use', logger }),
  });
  const streams = new HttpStreams({
    pipeline,
    stages,
    sockets,
    logger,
    originPolicy: new WebSocketOriginPolicy(config.server.corsOrigins, () => parts.publicUrl.value),
    heartbeatMs: config.live.streamHeartbeatMs,
    fanOut: fanOutFor(config.server.fastPaths),
    createContext: (principal, requestId, cacheMode) => createOperationContext({ principal, requestId, cacheMode, logger }),
  });
  return { sockets, guard, streams };
}

/** graphql-ws on the HTTP server, each operation through the live stage list (the guard's hooks). */
function startLive(parts: Parts, httpServer: Server, pipeline: OperationPipeline, guard: WsOperationGuard) {
  const { config, logger, metrics } = parts;
  const graphqlWs = startGraphqlWs(httpServer, {
    pipeline,
    operations: guard,
    logger,
    maxPayloadBytes: config.limits.operation.maxBodyBytes,
    production: config.server.nodeEnv === 'production',
    originPolicy: new WebSocketOriginPolicy(config.server.corsOrigins, () => parts.publicUrl.value),
    fanOut: fanOutFor(config.server.fastPaths),
  });
  // Upgraded connections, for /metrics (a refused upgrade counts for the instant it lasts).
  // One listener function for every socket (`on`: a socket closes once; `once` would wrap it for each socket).
  const countClosedWebSocket = (): void => metrics.webSocketClosed();
  httpServer.on('upgrade', (_req, socket) => {
    metrics.webSocketOpened();
    socket.on('close', countClosedWebSocket);
  });
  return graphqlWs;
}

async function listen(httpServer: Server, config: ResolvedConfig): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(config.server.port, config.server.host, () => resolve());
  });
  const { port } = httpServer.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}
