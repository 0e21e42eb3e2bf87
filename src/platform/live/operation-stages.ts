import type { ExecutionArgs, ExecutionResult, GraphQLError } from 'graphql';
import { ForbiddenError, GatewayError } from '../errors/gateway-errors';
import { asksForIncrementalDelivery, executeIncrementally, type IncrementalPayload } from '../graphql/incremental-delivery';
import type { OperationContext } from '../graphql/operation-context';
import { logErrorDetail } from '../graphql/operation-observer.plugin';
import type { ClientResult, OperationPipeline, OperationResults, PreparedOperation } from '../graphql/operation-pipeline';
import type { DocumentRequest } from '../graphql/persisted/persisted-documents';
import { rateLimitedError } from '../graphql/refusals';
import type { RateLimiter } from '../http/rate-limiter';
import type { GatewayMetrics, OperationOutcome } from '../observability/gateway-metrics';
import type { Logger } from '../observability/logger';
import { outcomeOf, type OperationRecorder } from '../observability/operation-recorder';
import { traceOperationResults } from '../observability/operation-span';
import { Telemetry } from '../observability/telemetry';
import { operationDeadline } from '../provider/operation-deadline';
import type { SubscriptionCaps } from './subscription-caps';

/** One operation on a live transport (WebSocket, SSE, multipart HTTP) as the stages see it, from its request to its record. */
export interface LiveOperation {
  readonly requestId: string;
  readonly transport: 'ws' | 'sse' | 'multipart';
  readonly started: number;
  /** describePrincipal(): a user id, a merchant key's id, `anonymous` or `invalid`, never a credential. */
  readonly principal: string;
  /** Whose allowance it spends and whose live work it is (principalKey): the rate limit's, the APQ quota's and the caps' key, as over HTTP. */
  readonly principalKey: string;
  /** What the client named to run: a text, a persisted document's id or an APQ hash. */
  readonly document: DocumentRequest;
  /** The request came from the gateway's own pages (the playground), which may send text in persisted-only mode. */
  readonly fromOwnPage: boolean;
  readonly operationName?: string | null;
  readonly variables?: Readonly<Record<string, unknown>> | null;
  /** The transport already spent the allowance (HTTP does, before it reads the body). */
  readonly allowanceSpent: boolean;
  /** Subscriptions already active on this connection (a WebSocket's; an HTTP stream carries one). */
  readonly onConnection: number;
  /** False on GET: a mutation must not run from a link or an image. */
  readonly mutationsAllowed: boolean;
  /** Asked after the last wait: why this connection may run nothing more (revoked, expired, past a cap), if so. */
  endedBecause(): GraphQLError | undefined;
  /** The text to run, once resolved (set by the transport when it resolved the document itself, as /graphql does). */
  query?: string;
  /** The checked document and the operation chosen in it. */
  prepared?: PreparedOperation;
  /** The subscription's root field while it counts against the caps. */
  subscriptionField?: string;
  /** How the operation went for its client, from what it was sent. */
  outcome?: ReturnType<typeof outcomeOf>;
}

/**
 * One concern of the operation pipeline, in the manner of GraphQL Yoga's plugins: each hook it has runs at its
 * point of every operation, in the order of the stage list (liveStages).
 */
export interface OperationStage {
  /** Before anything executes: errors refuse the operation, and no later stage admits it. */
  admit?(operation: LiveOperation): readonly GraphQLError[] | undefined | Promise<readonly GraphQLError[] | undefined>;
  /** The operation's context once built, before it executes. */
  context?(operation: LiveOperation, context: OperationContext): void;
  /** Around a query's or mutation's execution (a subscription's events come through the fan-out): `run` is the rest. */
  execute?(operation: LiveOperation, args: ExecutionArgs, run: () => Promise<OperationResults>): Promise<OperationResults>;
  /** Each result or payload as the client gets it. */
  sent?(operation: LiveOperation, result: ClientResult): void;
  /** Once, however the operation ended; `forced` is the transport's word when it was cut short. */
  finish?(operation: LiveOperation, forced: OperationOutcome | undefined): void;
}

export interface LiveStagesDeps {
  pipeline: OperationPipeline;
  limiter: RateLimiter;
  caps: SubscriptionCaps;
  recorder: OperationRecorder;
  metrics: GatewayMetrics;
  logger: Logger;
  /** The deadline of a query or mutation, as over HTTP; a subscription lives as long as its client wants. */
  operationTimeoutMs: number;
  telemetry?: Telemetry;
}

/**
 * The stages of an operation on a live transport, in the order they run. Adding a concern is one entry here; the
 * WebSocket (ws-operation-guard.ts) and the HTTP streams (http-streams.ts) run the list through OperationStages.
 * Plain HTTP runs the same functions through Apollo's hooks (docs/architecture.md, "The operation pipeline").
 */
export function liveStages(deps: LiveStagesDeps): OperationStage[] {
  return [
    useRateLimit(deps.limiter),
    usePersistedDocuments(deps.pipeline),
    useParseAndValidate(deps.pipeline),
    useConnectionStanding(),
    useCostLimit(deps.pipeline),
    useNoMutationFromGet(deps.pipeline),
    useSubscriptionCaps(deps.caps, deps.metrics),
    useOperationDeadline(deps.operationTimeoutMs),
    useOperationSpan(deps.telemetry ?? Telemetry.off),
    useIncrementalDelivery(),
    useOperationRecord(deps.recorder),
  ];
}

/** The allowance shared with HTTP (and, through Redis, with every instance), spent before anything is parsed. */
function useRateLimit(limiter: RateLimiter): OperationStage {
  return {
    async admit(operation) {
      if (operation.allowanceSpent) return undefined;
      const decision = await limiter.admit(operation.principalKey);
      return decision.allowed ? undefined : [rateLimitedError(decision.retryAfterSeconds)];
    },
  };
}

/** Persisted documents and APQ, as over HTTP; a refused id, hash or text is the operation's one error. */
function usePersistedDocuments(pipeline: OperationPipeline): OperationStage {
  return {
    async admit(operation) {
      if (operation.query !== undefined) return undefined;
      try {
        operation.query = (await pipeline.resolveDocument(operation.document, operation.fromOwnPage, operation.principalKey)) ?? '';
        return undefined;
      } catch (error) {
        if (error instanceof GatewayError) return [pipeline.refusal(error)];
        throw error;
      }
    },
  };
}

/** The token, depth, alias and directive limits with parsing and validation (once per text), then the operation chosen. */
function useParseAndValidate(pipeline: OperationPipeline): OperationStage {
  return {
    admit(operation) {
      const prepared = pipeline.prepare(operation.query ?? '', operation.operationName, operation.variables);
      if ('errors' in prepared) return prepared.errors;
      operation.prepared = prepared;
      return undefined;
    },
  };
}

/** After the last wait: a connection closed for its principal (revoked, expired, past a cap) runs nothing more. */
function useConnectionStanding(): OperationStage {
  return {
    admit(operation) {
      const ended = operation.endedBecause();
      return ended ? [ended] : undefined;
    },
  };
}

/** The cost limit, with the operation's variables; a deferred fragment costs what it would cost inline. */
function useCostLimit(pipeline: OperationPipeline): OperationStage {
  return {
    admit(operation) {
      const tooCostly = pipeline.checkCost(operation.prepared!.args);
      return tooCostly ? [tooCostly] : undefined;
    },
  };
}

function useNoMutationFromGet(pipeline: OperationPipeline): OperationStage {
  return {
    admit(operation) {
      if (operation.mutationsAllowed || operation.prepared!.operation.operation !== 'mutation') return undefined;
      return [pipeline.refusal(new ForbiddenError('A mutation is not run from a GET request: POST it.'))];
    },
  };
}

/** A subscription counts against the caps (per connection, per principal, one count across transports) until it ends. */
function useSubscriptionCaps(caps: SubscriptionCaps, metrics: GatewayMetrics): OperationStage {
  return {
    admit(operation) {
      const { operation: definition } = operation.prepared!;
      if (definition.operation !== 'subscription') return undefined;
      const refused = caps.admit(operation.onConnection, operation.principalKey);
      if (refused) return [refused];
      const first = definition.selectionSet.selections[0];
      operation.subscriptionField = first?.kind === 'Field' ? first.name.value : 'unknown';
      metrics.subscriptionStarted(operation.subscriptionField);
      return undefined;
    },
    finish(operation) {
      if (operation.subscriptionField === undefined) return;
      caps.release(operation.principalKey);
      metrics.subscriptionEnded(operation.subscriptionField);
    },
  };
}

function useOperationDeadline(timeoutMs: number): OperationStage {
  return {
    context(operation, context) {
      if (operation.prepared?.operation.operation !== 'subscription') context.deadline = operationDeadline(timeoutMs);
    },
  };
}

/**
 * A query's or mutation's execution inside an operation span, open until its last payload (@defer, @stream) or the
 * client's going. Subscriptions have none: a span open for a subscription's lifetime would be hours long; their
 * events show as `live deliver` spans instead.
 */
function useOperationSpan(telemetry: Telemetry): OperationStage {
  if (!telemetry.enabled) return {};
  return {
    execute(operation, _args, run) {
      // Multipart answers on /graphql, as plain HTTP does.
      const transport = operation.transport === 'multipart' ? 'http' : operation.transport;
      return traceOperationResults(telemetry, transport, operation.requestId, named(operation), outcomeOf, run);
    },
  };
}

/**
 * @defer and @stream: a document that uses them runs on the incremental executor and answers its payloads as they
 * become ready; the client going away cancels the provider calls still running for later payloads. Any other
 * query keeps the pipeline's compiled executor.
 */
function useIncrementalDelivery(): OperationStage {
  return {
    execute(_operation, args, run) {
      if (!asksForIncrementalDelivery(args.document)) return run();
      const context = args.contextValue as OperationContext | undefined;
      return executeIncrementally(args, () => context?.deadline?.cancel());
    },
  };
}

/** The operation's one log line and metrics, as Apollo's observer plugin writes them for HTTP. */
function useOperationRecord(recorder: OperationRecorder): OperationStage {
  return {
    sent(operation, result) {
      // The first result says how it went, unless a later one carries errors.
      if (result.errors || !operation.outcome) operation.outcome = outcomeOf(result.data, result.errors);
    },
    finish(operation, forced) {
      const { outcome } = operation;
      recorder.record({
        requestId: operation.requestId,
        principal: operation.principal,
        transport: operation.transport,
        ...named(operation),
        durationMs: performance.now() - operation.started,
        ...(outcome && outcome.outcome !== 'success' ? outcome : { outcome: forced ?? 'success' }),
      });
    },
  };
}

function named(operation: LiveOperation): { operationName: string | undefined; operationType: string | undefined } {
  const definition = operation.prepared?.operation;
  return { operationName: definition?.name?.value ?? operation.operationName ?? undefined, operationType: definition?.operation };
}

/**
 * Runs the stage list for one transport: each hook of every stage in order, and between them what is the
 * pipeline's own (execution, and the error stage: masking, the bank connections' partial failures, the request id
 * on every error, in one place for every result and refusal).
 */
export class OperationStages {
  private readonly admitting: OperationStage[];
  private readonly contexts: OperationStage[];
  /** Innermost first: the first stage of the list wraps the others. */
  private readonly executing: OperationStage[];
  private readonly sending: OperationStage[];
  private readonly finishing: OperationStage[];

  constructor(
    stages: readonly OperationStage[],
    private readonly pipeline: OperationPipeline,
    private readonly logger: Logger,
  ) {
    // Sorted once by hook, so a result runs only the stages that look at results.
    this.admitting = stages.filter((stage) => stage.admit);
    this.contexts = stages.filter((stage) => stage.context);
    this.executing = stages.filter((stage) => stage.execute).reverse();
    this.sending = stages.filter((stage) => stage.sent);
    this.finishing = stages.filter((stage) => stage.finish);
  }

  /** The operation ready to execute, or the errors of the first stage that refused it. */
  async admit(operation: LiveOperation): Promise<PreparedOperation | { errors: readonly GraphQLError[] }> {
    for (const stage of this.admitting) {
      const answer = stage.admit!(operation);
      // Most stages answer at once; awaiting only the ones that wait keeps an operation from queueing once per stage.
      const refused = answer instanceof Promise ? await answer : answer;
      if (refused) return { errors: refused };
    }
    return operation.prepared!;
  }

  context(operation: LiveOperation, context: OperationContext): OperationContext {
    for (const stage of this.contexts) stage.context!(operation, context);
    return context;
  }

  execute(operation: LiveOperation, args: ExecutionArgs): Promise<OperationResults> {
    let run = (): Promise<OperationResults> => this.pipeline.execute(args);
    for (const stage of this.executing) {
      const inner = run;
      run = () => stage.execute!(operation, args, inner);
    }
    return run();
  }

  /** A result or payload as the client gets it: its errors' detail logged, then the pipeline's error stage. */
  format(operation: LiveOperation, result: ExecutionResult | IncrementalPayload, context: OperationContext | undefined): ClientResult {
    this.logDetail(operation, result.errors);
    if ('incremental' in result) for (const part of result.incremental ?? []) this.logDetail(operation, part.errors);
    return this.sent(operation, this.pipeline.clientResult(result, context));
  }

  /** The one result of an operation refused before it executed. */
  refused(operation: LiveOperation, errors: readonly GraphQLError[]): ClientResult {
    this.logDetail(operation, errors);
    return this.sent(operation, { errors: this.pipeline.clientErrors(errors, undefined, operation.requestId) });
  }

  finish(operation: LiveOperation, forced?: OperationOutcome): void {
    for (const stage of this.finishing) stage.finish!(operation, forced);
  }

  /** Every stage that looks at results sees this one as sent. */
  private sent<R extends ClientResult>(operation: LiveOperation, result: R): R {
    for (const stage of this.sending) stage.sent!(operation, result);
    return result;
  }

  private logDetail(operation: LiveOperation, errors: readonly GraphQLError[] | undefined): void {
    for (const error of errors ?? []) logErrorDetail(this.logger, error, operation.requestId);
  }
}
