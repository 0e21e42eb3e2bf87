import { randomUUID } from 'node:crypto';
import type { GraphQLError, GraphQLFormattedError } from 'graphql';
import type { Principal } from '../access/principal';
import { requireUser } from '../access/principal';
import type { BankConnectionRecord } from '../../identity';
import { DataLoaders } from '../provider/data.loaders';
import type { BearerAuth, CallOptions } from '../provider/http.client';
import type { OperationDeadline } from '../provider/operation-deadline';
import type { CacheMode } from '../provider/response-cache';
import { NotFoundError, UnauthenticatedError } from '../errors/gateway-errors';
import type { Logger } from '../observability/logger';
import type { Services } from '../../app/services';

/** A failure that costs only its own part of the answer: null (or left out) there, an error at `path`. */
export interface PartialFailure {
  path: readonly (string | number)[];
  error: GraphQLError;
}

/**
 * Names one piece of per-operation state a feature keeps in the context (see `OperationContext.scoped`). The key,
 * not its description, is the identity: two keys with the same description are two pieces of state.
 */
export interface ScopedKey<T> {
  readonly description: string;
  /** Never set: carries T, so that `scoped` returns what the key was made for. */
  readonly type?: T;
}

export function scopedKey<T>(description: string): ScopedKey<T> {
  return { description };
}

/** Per request (HTTP) or per subscription operation (WebSocket). Knows no feature: features keep their state in `scoped`. */
export interface OperationContext {
  readonly requestId: string;
  readonly principal: Principal;
  /** The gateway's logger with this request's id and principal. */
  readonly logger: Logger;
  /** Whether this request's provider reads may be answered from the response cache (Cache-Control: no-cache bypasses it). */
  readonly cacheMode: CacheMode;
  /**
   * The running operation's deadline: set when an HTTP request's context is made, and by the WebSocket server
   * before each query or mutation it executes. A subscription's events run without one, as they always have.
   */
  deadline: OperationDeadline | undefined;
  /** What every provider call made for this operation passes: its request id (X-Request-Id) and its deadline. */
  callOptions(): CallOptions;
  /**
   * This operation's value for `key`: made by `make` on first use, then the same value for the rest of the
   * operation (per-request loaders, a list read once).
   */
  scoped<T>(key: ScopedKey<T>, make: () => T): T;
  /** Records a failure of one part of the answer; sent with the answer as an error at its path, and the answer is not kept. */
  reportPartialFailure(failure: PartialFailure): void;
  readonly partialFailures: PartialFailure[];
  /**
   * Set once the operation is known: whether its answer may be stored in the AnswerCache (src/platform/http/answer-cache.ts).
   * An object, not a flag, because Apollo hands plugins a shallow copy of the context.
   */
  answer: { cacheable: boolean; operationName?: string };
  /** Reports data this operation read that stays fresh until `freshUntilMs` (epoch ms); 0 for a read that failed. */
  noteDataRead(freshUntilMs: number): void;
  /** Until when everything this request read stays fresh (epoch ms); 0 when it read nothing. */
  dataFreshUntilMs(): number;
}

/**
 * @deprecated The whole gateway's services and one feature's helpers on the request context: features get their
 * services through their resolvers' constructors and keep per-request state in `scoped`. Removed, with the
 * imports of src/app and src/identity above, once no feature reads them.
 */
export interface LegacyContextFields {
  services: Services;
  /** The signed-in user's bank connections that are not revoked, oldest first; read once per request. */
  connections(): Promise<readonly BankConnectionRecord[]>;
  /** The active connection of this user with that id; NOT_FOUND for anyone else's or an ended one. */
  activeConnection(connectionId: string): Promise<BankConnectionRecord>;
  /** One connection's data loaders (one provider call per distinct resource per request). */
  loadersFor(connectionId: string): DataLoaders;
  /** The provider bearer of one of this user's connections, for calls outside the loaders. */
  bankBearer(connectionId: string): BearerAuth;
}

/** The request context every resolver receives; the legacy fields go once no feature reads them. */
export interface GatewayContext extends OperationContext, LegacyContextFields {}

/**
 * A request id: a UUID as one flat string. randomUUID builds its text by concatenation, a rope of a dozen pieces
 * (about 350 bytes) that an open subscription would otherwise keep for its whole life.
 */
export function newRequestId(): string {
  return Buffer.from(randomUUID(), 'latin1').toString('latin1');
}

export interface OperationContextInit {
  principal: Principal;
  requestId: string;
  /** The gateway's logger; the context makes its request's child on first use. */
  logger: Logger;
  cacheMode: CacheMode;
  deadline?: OperationDeadline;
}

export function createOperationContext(init: OperationContextInit): OperationContext {
  return new RequestContext(init.logger, init.principal, init.requestId, init.cacheMode, init.deadline);
}

/** @deprecated Use createOperationContext; this one also carries the legacy fields (LegacyContextFields). */
export function createContext(services: Services, principal: Principal, requestId: string, cacheMode: CacheMode, deadline?: OperationDeadline): GatewayContext {
  return new LegacyRequestContext(services, principal, requestId, cacheMode, deadline);
}

/**
 * A class rather than an object of closures: every HTTP request and every WebSocket operation makes one, and an
 * open subscription keeps its own for as long as it lives, so its methods are shared and its state is a few fields.
 * Apollo copies the context with its prototype (`Object.assign(Object.create(prototype), context)`), and a copy
 * shares the maps and arrays below with the original, as the closures did.
 */
class RequestContext implements OperationContext {
  readonly partialFailures: PartialFailure[] = [];
  readonly answer: OperationContext['answer'] = { cacheable: false };
  /** In an object so that Apollo's copies share it too; the map and the logger are made on first use. */
  private readonly state: { freshUntilMs: number; scoped?: Map<ScopedKey<unknown>, unknown>; logger?: Logger } = {
    freshUntilMs: Number.POSITIVE_INFINITY,
  };

  constructor(
    private readonly rootLogger: Logger,
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
    return (this.state.logger ??= this.rootLogger.child({ requestId: this.requestId, principal: describePrincipal(this.principal) }));
  }

  scoped<T>(key: ScopedKey<T>, make: () => T): T {
    const values = (this.state.scoped ??= new Map());
    if (values.has(key)) return values.get(key) as T;
    const made = make();
    values.set(key, made);
    return made;
  }

  noteDataRead(freshUntilMs: number): void {
    this.state.freshUntilMs = Math.min(this.state.freshUntilMs, freshUntilMs);
  }

  dataFreshUntilMs(): number {
    const until = this.state.freshUntilMs;
    return Number.isFinite(until) ? until : 0;
  }

  reportPartialFailure(failure: PartialFailure): void {
    this.partialFailures.push(failure);
    this.answer.cacheable = false;
  }
}

const LEGACY_CONNECTIONS = scopedKey<Promise<readonly BankConnectionRecord[]>>('legacy connections');
const LEGACY_LOADERS = scopedKey<Map<string, DataLoaders>>('legacy loaders');

/** @deprecated Carries LegacyContextFields; goes with them. */
class LegacyRequestContext extends RequestContext implements GatewayContext {
  constructor(
    readonly services: Services,
    principal: Principal,
    requestId: string,
    cacheMode: CacheMode,
    deadline: OperationDeadline | undefined,
  ) {
    super(services.logger, principal, requestId, cacheMode, deadline);
  }

  connections(): Promise<readonly BankConnectionRecord[]> {
    const user = requireUser(this.principal);
    return this.scoped(LEGACY_CONNECTIONS, () => this.services.connections.connectionsOf(user.userId));
  }

  async activeConnection(connectionId: string): Promise<BankConnectionRecord> {
    const found = (await this.connections()).find((connection) => connection.id === connectionId);
    if (!found) throw new NotFoundError('No bank connection with that id belongs to this user.');
    if (found.status !== 'active') throw new UnauthenticatedError('This bank connection has expired; connect the bank again.');
    return found;
  }

  loadersFor(connectionId: string): DataLoaders {
    requireUser(this.principal);
    const loaders = this.scoped(LEGACY_LOADERS, () => new Map<string, DataLoaders>());
    let found = loaders.get(connectionId);
    if (!found) {
      found = new DataLoaders(
        this.services.data,
        this.services.responseCache,
        { userId: connectionId, bearer: this.services.userTokens.bearerFor(connectionId) },
        this.cacheMode,
        this.callOptions(),
        (freshUntilMs) => this.noteDataRead(freshUntilMs),
      );
      loaders.set(connectionId, found);
    }
    return found;
  }

  bankBearer(connectionId: string): BearerAuth {
    requireUser(this.principal);
    return this.services.userTokens.bearerFor(connectionId);
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
