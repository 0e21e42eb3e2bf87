import { randomUUID } from 'node:crypto';
import type { GraphQLError, GraphQLFormattedError } from 'graphql';
import type { Principal } from '../access/principal';
import { requireUser } from '../access/principal';
import { DataLoaders } from '../provider/data.loaders';
import type { BearerAuth, CallOptions } from '../provider/http.client';
import type { OperationDeadline } from '../provider/operation-deadline';
import type { CacheMode } from '../provider/response-cache';
import { NotFoundError, UnauthenticatedError } from '../errors/gateway-errors';
import type { BankConnectionRecord } from '../../identity/connection.store';
import type { Logger } from '../observability/logger';
import type { Services } from '../../app/services';

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
  /** The signed-in user's bank connections that are not revoked, oldest first; read once per request. */
  /**
   * The running operation's deadline: set when an HTTP request's context is made, and by the WebSocket server
   * before each query or mutation it executes. A subscription's events run without one, as they always have.
   */
  deadline: OperationDeadline | undefined;
  /** What every provider call made for this operation passes: its request id (X-Request-Id) and its deadline. */
  callOptions(): CallOptions;
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
   * Set once the operation is known: whether its answer may be stored in the AnswerCache (src/platform/http/answer-cache.ts).
   * An object, not a flag, because Apollo hands plugins a shallow copy of the context.
   */
  answer: { cacheable: boolean; operationName?: string };
  /** Until when everything this request read from the data cache stays fresh (epoch ms); 0 when it read nothing. */
  dataFreshUntilMs(): number;
}

/**
 * A request id: a UUID as one flat string. randomUUID builds its text by concatenation, a rope of a dozen pieces
 * (about 350 bytes) that an open subscription would otherwise keep for its whole life.
 */
export function newRequestId(): string {
  return Buffer.from(randomUUID(), 'latin1').toString('latin1');
}

export function createContext(services: Services, principal: Principal, requestId: string, cacheMode: CacheMode, deadline?: OperationDeadline): GatewayContext {
  return new OperationContext(services, principal, requestId, cacheMode, deadline);
}

/**
 * A class rather than an object of closures: every HTTP request and every WebSocket operation makes one, and an
 * open subscription keeps its own for as long as it lives, so its methods are shared and its state is a few fields.
 * Apollo copies the context with its prototype (`Object.assign(Object.create(prototype), context)`), and a copy
 * shares the maps and arrays below with the original, as the closures did.
 */
class OperationContext implements GatewayContext {
  readonly partialFailures: PartialFailure[] = [];
  readonly answer: GatewayContext['answer'] = { cacheable: false };
  /** Made or read once, in an object so that Apollo's copies share them too; none of them until used. */
  private readonly memo: { connections?: Promise<readonly BankConnectionRecord[]>; logger?: Logger; loaders?: Map<string, DataLoaders> } = {};

  constructor(
    readonly services: Services,
    readonly principal: Principal,
    readonly requestId: string,
    readonly cacheMode: CacheMode,
    // Set later by the WebSocket server, before each query or mutation it executes.
    public deadline: OperationDeadline | undefined,
  ) {}

  callOptions(): CallOptions {
    return { requestId: this.requestId, deadline: this.deadline };
  }

  // Made on first use: most operations never log, and an idle subscription should not carry a logger of its own.
  get logger(): Logger {
    return (this.memo.logger ??= this.services.logger.child({ requestId: this.requestId, principal: describePrincipal(this.principal) }));
  }

  dataFreshUntilMs(): number {
    const { loaders } = this.memo;
    if (!loaders || loaders.size === 0) return 0;
    const until = Math.min(...[...loaders.values()].map((loader) => loader.freshUntilMs));
    return Number.isFinite(until) ? until : 0;
  }

  connections(): Promise<readonly BankConnectionRecord[]> {
    const user = requireUser(this.principal);
    return (this.memo.connections ??= this.services.connections.connectionsOf(user.userId));
  }

  async activeConnection(connectionId: string): Promise<BankConnectionRecord> {
    const found = (await this.connections()).find((connection) => connection.id === connectionId);
    if (!found) throw new NotFoundError('No bank connection with that id belongs to this user.');
    if (found.status !== 'active') throw new UnauthenticatedError('This bank connection has expired; connect the bank again.');
    return found;
  }

  loadersFor(connectionId: string): DataLoaders {
    requireUser(this.principal);
    const loaders = (this.memo.loaders ??= new Map());
    let found = loaders.get(connectionId);
    if (!found) {
      // The data cache is keyed by connection: one grant's answers are never another's, whoever the user is.
      found = new DataLoaders(
        this.services.data,
        this.services.responseCache,
        { userId: connectionId, bearer: this.services.userTokens.bearerFor(connectionId) },
        this.cacheMode,
        this.callOptions(),
      );
      loaders.set(connectionId, found);
    }
    return found;
  }

  bankBearer(connectionId: string): BearerAuth {
    requireUser(this.principal);
    return this.services.userTokens.bearerFor(connectionId);
  }

  reportPartialFailure(failure: PartialFailure): void {
    this.partialFailures.push(failure);
    this.answer.cacheable = false;
  }
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
