import type { GraphQLError, GraphQLFormattedError } from 'graphql';
import type { Principal } from './auth/principal';
import { requireUser } from './auth/principal';
import { DataLoaders } from './datasources/data.loaders';
import type { BearerAuth, CallOptions } from './datasources/http.client';
import type { OperationDeadline } from './datasources/operation-deadline';
import type { CacheMode } from './datasources/response-cache';
import { NotFoundError, UnauthenticatedError } from './errors';
import type { BankConnectionRecord } from './identity/connection.store';
import type { Logger } from './logger';
import type { Services } from './services';

/** A connection's failure that costs only its own part of the answer: null (or left out) there, an error at `path`. */
export interface PartialFailure {
  path: readonly (string | number)[];
  error: GraphQLError;
}

/** Per request (HTTP) or per subscription operation (WebSocket). */
export interface GatewayContext {
  requestId: string;
  principal: Principal;
  services: Services;
  logger: Logger;
  cacheMode: CacheMode;
  /**
   * The running operation's deadline: set when an HTTP request's context is made, and by the WebSocket server
   * before each query or mutation it executes. A subscription's events run without one, as they always have.
   */
  deadline: OperationDeadline | undefined;
  /** What every provider call made for this operation passes: its request id (X-Request-Id) and its deadline. */
  callOptions(): CallOptions;
  /** The signed-in user's bank connections that are not revoked, oldest first; read once per request. */
  connections(): Promise<readonly BankConnectionRecord[]>;
  /** The active connection of this user with that id; NOT_FOUND for anyone else's or an ended one. */
  activeConnection(connectionId: string): Promise<BankConnectionRecord>;
  /** One connection's data loaders (one provider call per distinct resource per request). */
  loadersFor(connectionId: string): DataLoaders;
  /** The provider bearer of one of this user's connections, for calls outside the loaders. */
  bankBearer(connectionId: string): BearerAuth;
  /** Records a per-connection failure; sent with the answer as an error at its path, and the answer is not kept. */
  reportPartialFailure(failure: PartialFailure): void;
  readonly partialFailures: PartialFailure[];
  /**
   * Set once the operation is known: whether its answer may be stored in the AnswerCache (src/http/answer-cache.ts).
   * An object, not a flag, because Apollo hands plugins a shallow copy of the context.
   */
  answer: { cacheable: boolean; operationName?: string };
  /** Until when everything this request read from the data cache stays fresh (epoch ms); 0 when it read nothing. */
  dataFreshUntilMs(): number;
}

/**
 * The request's logger, made on first use: most operations never log, and an idle subscription should not carry a
 * logger of its own. The getter lives on the contexts' shared prototype, not on each context: Apollo hands plugins
 * and resolvers a copy made with Object.assign, which would call an own getter, making a logger for every request.
 */
const CONTEXT_PROTOTYPE = {
  get logger(): Logger {
    const context = this as unknown as GatewayContext & { madeLogger?: Logger };
    return (context.madeLogger ??= context.services.logger.child({ requestId: context.requestId, principal: describePrincipal(context.principal) }));
  },
};

export function createContext(services: Services, principal: Principal, requestId: string, cacheMode: CacheMode, deadline?: OperationDeadline): GatewayContext {
  const loaders = new Map<string, DataLoaders>();
  let connections: Promise<readonly BankConnectionRecord[]> | undefined;
  const partialFailures: PartialFailure[] = [];
  const answer = { cacheable: false } as GatewayContext['answer'];
  const context: GatewayContext = Object.assign(Object.create(CONTEXT_PROTOTYPE) as { readonly logger: Logger }, {
    requestId,
    principal,
    services,
    cacheMode,
    deadline,
    // Reads `context.deadline` when called: the WebSocket server sets it after the context is made.
    callOptions: () => ({ requestId, deadline: context.deadline }),
    answer,
    partialFailures,
    dataFreshUntilMs: () => {
      if (loaders.size === 0) return 0;
      const until = Math.min(...[...loaders.values()].map((loader) => loader.freshUntilMs));
      return Number.isFinite(until) ? until : 0;
    },
    connections() {
      const user = requireUser(principal);
      connections ??= services.connections.connectionsOf(user.userId);
      return connections;
    },
    async activeConnection(connectionId) {
      const found = (await context.connections()).find((connection) => connection.id === connectionId);
      if (!found) throw new NotFoundError('No bank connection with that id belongs to this user.');
      if (found.status !== 'active') throw new UnauthenticatedError('This bank connection has expired; connect the bank again.');
      return found;
    },
    loadersFor(connectionId) {
      requireUser(principal);
      let found = loaders.get(connectionId);
      if (!found) {
        // The data cache is keyed by connection: one grant's answers are never another's, whoever the user is.
        found = new DataLoaders(
          services.data,
          services.responseCache,
          { userId: connectionId, bearer: services.userTokens.bearerFor(connectionId) },
          cacheMode,
          context.callOptions(),
        );
        loaders.set(connectionId, found);
      }
      return found;
    },
    bankBearer(connectionId) {
      requireUser(principal);
      return services.userTokens.bearerFor(connectionId);
    },
    reportPartialFailure(failure) {
      partialFailures.push(failure);
      answer.cacheable = false;
    },
  } satisfies Omit<GatewayContext, 'logger'>);
  return context;
}

export function formatPartialFailure(failure: PartialFailure): GraphQLFormattedError {
  return { message: failure.error.message, path: [...failure.path], extensions: { ...failure.error.extensions } };
}

/** For logs: who, without anything that would let a reader act as them. */
export function describePrincipal(principal: Principal): string {
  switch (principal.kind) {
    case 'user':
      return principal.userId;
    case 'merchant':
      return principal.keyId;
    default:
      return principal.kind;
  }
}
