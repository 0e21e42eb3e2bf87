import { randomUUID } from 'node:crypto';
import type { GraphQLError, GraphQLFormattedError } from 'graphql';
import type { Principal } from '../access/principal';
import type { CallOptions } from '../provider/http.client';
import type { OperationDeadline } from '../provider/operation-deadline';
import type { CacheMode } from '../provider/response-cache';
import type { Logger } from '../observability/logger';

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
  /** Set when an agent asked through /mcp: it acts for the principal, and what it starts is marked as its own. */
  readonly agent: AgentLabel | undefined;
  /** The gateway's logger with this request's id and principal (and the agent, when one asked). */
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
  /** What the answer says besides its data and errors (answer-extensions.ts); an object Apollo's copies share. */
  readonly extensions: Record<string, unknown>;
  /** Reports data this operation read that stays fresh until `freshUntilMs` (epoch ms); 0 for a read that failed. */
  noteDataRead(freshUntilMs: number): void;
  /** Until when everything this request read stays fresh (epoch ms); 0 when it read nothing. */
  dataFreshUntilMs(): number;
}

/**
 * A request id: a UUID as one flat string. randomUUID builds its text by concatenation, a rope of a dozen pieces
 * (about 350 bytes) that an open subscription would otherwise keep for its whole life.
 */
export function newRequestId(): string {
  return Buffer.from(randomUUID(), 'latin1').toString('latin1');
}

/** An MCP client acting for a principal, by the name it gives itself. */
export interface AgentLabel {
  clientName: string;
}

export interface OperationContextInit {
  principal: Principal;
  agent?: AgentLabel;
  requestId: string;
  /** The gateway's logger; the context makes its request's child on first use. */
  logger: Logger;
  cacheMode: CacheMode;
  deadline?: OperationDeadline;
}

export function createOperationContext(init: OperationContextInit): OperationContext {
  const context = new RequestContext(init.logger, init.principal, init.requestId, init.cacheMode, init.deadline);
  if (init.agent) context.agent = init.agent;
  return context;
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
  readonly extensions: Record<string, unknown> = {};
  agent: AgentLabel | undefined;
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
    const agent = this.agent === undefined ? {} : { initiatedBy: 'agent', agentClient: this.agent.clientName };
    return (this.state.logger ??= this.rootLogger.child({ requestId: this.requestId, principal: describePrincipal(this.principal), ...agent }));
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
