import type { FormattedExecutionResult, ServerOptions } from 'graphql-ws';
import type { Principal, PrincipalSource } from '../access/principal';
import { describePrincipal, newRequestId } from '../graphql/operation-context';
import type { Logger } from '../observability/logger';
import type { GatewayMetrics, OperationOutcome } from '../observability/gateway-metrics';
import { logErrorDetail } from '../graphql/operation-observer.plugin';
import { outcomeOf, type OperationRecorder } from '../observability/operation-recorder';
import { UNAUTHORIZED_CLOSE_CODE, type PrincipalSockets } from './principal-sockets';
import type { SocketConnection } from './ws-transport';
import { isOwnPage } from '../graphql/persisted/persisted-documents';
import type { OperationPipeline } from '../graphql/operation-pipeline';
import { withRequestId } from '../graphql/operation-errors';
import { ForbiddenError, GatewayError, UnauthenticatedError } from '../errors/gateway-errors';
import type { RecentRevocations } from '../access/recent-revocations';
import { rateLimitKey } from '../http/principal-key';
import type { RateLimiter } from '../http/rate-limiter';
import { rateLimitedError } from '../graphql/refusals';
import type { SubscriptionCaps } from './subscription-caps';
import { admitOperation, liveWorkKey } from './operation-admission';

/** The part of graphql-ws's per-connection context the guard reads. */
interface ConnectionContext {
  readonly connectionParams?: Readonly<Record<string, unknown>>;
  readonly extra: SocketConnection;
}

interface OperationState {
  started: number;
  principal: string;
  operationName: string | undefined;
  operationType: string | undefined;
  /** Replaced by the context's own once the operation runs, so errors and the log line agree. */
  requestId: string;
  /** The subscription's root field while it counts as active. */
  subscriptionField?: string;
  /** Whose live work it is (SubscriptionCaps): the user, the merchant key, or the address of a caller not signed in. */
  capKey: string;
  /** Whose allowance it spends: the rate limit's and the APQ quota's key, the same as over HTTP. */
  rateKey: string;
  /** An active subscription, counted against the caps until it finishes. */
  subscriptionCounted?: boolean;
  outcome?: ReturnType<typeof outcomeOf>;
  /** Until onSubscribe hands back execution arguments, an error is the operation's last event (no onComplete). */
  executing: boolean;
  /** Set when the principal's allowance was spent. */
  retryAfterSeconds?: number;
}

export interface WsOperationGuardDeps {
  /** Persisted documents, the cost limit and refusals, as over HTTP (src/platform/graphql/operation-pipeline.ts). */
  pipeline: OperationPipeline;
  limiter: RateLimiter;
  recorder: OperationRecorder;
  metrics: GatewayMetrics;
  logger: Logger;
  principals: PrincipalSource;
  /** Each user's sockets, so a revocation can close them (src/platform/live/principal-sockets.ts). */
  sockets: PrincipalSockets;
  /** Revocations heard while a socket's principal was looked up (src/platform/access/recent-revocations.ts). */
  revocations: RecentRevocations;
  caps: SubscriptionCaps;
}

/**
 * Over WebSocket what the HTTP path gets from the HTTP guard and Apollo's plugins, wrapped around the graphql-ws
 * options (src/platform/live/graphql-ws.server.ts runs the pipeline's parse, validation, execution and masking):
 * the rate limit before anything is parsed, the pipeline's persisted documents, its cost limit once the operation
 * is known, the request id on every error, one log line per operation, error detail in the log, and the
 * active-subscription gauge.
 */
export class WsOperationGuard {
  private readonly operations = new WeakMap<object, Map<string, OperationState>>();
  private readonly running = new Set<OperationState>();

  constructor(private readonly deps: WsOperationGuardDeps) {}

  /** Resolves once no query or mutation is running over any socket (open subscriptions do not count), or at the deadline. */
  async drain(deadline: number): Promise<void> {
    while ([...this.running].some((state) => state.operationType !== 'subscription') && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  wrap<P extends Record<string, unknown> | undefined, E>(options: ServerOptions<P, E>): ServerOptions<P, E> {
    return {
      ...options,
      onSubscribe: async (ctx, id, payload) => {
        const connection = ctx as unknown as ConnectionContext;
        const state = await this.begin(connection, id, payload.operationName ?? undefined);
        if (state.retryAfterSeconds !== undefined) return [rateLimitedError(state.retryAfterSeconds)];
        let query: string | undefined;
        try {
          // graphql-ws requires `query` to be a string: a client naming a persisted document sends "" with it.
          query = await this.deps.pipeline.resolveDocument(payload, isOwnPage(connection.extra.headers), state.rateKey);
        } catch (error) {
          if (error instanceof GatewayError) return [this.deps.pipeline.refusal(error)];
          throw error;
        }
        const admitted = admitOperation(this.deps, {
          query: query ?? '',
          operationName: payload.operationName,
          variables: payload.variables,
          capKey: state.capKey,
          onConnection: this.activeSubscriptions(connection),
          // After the last wait: a socket closed for its principal (revoked, expired, past a cap) runs nothing more.
          endedBecause: () => {
            const ended = this.deps.sockets.endedBecause(connection.extra.socket);
            if (ended === undefined) return undefined;
            const message = `This WebSocket was closed: ${ended.reason}.`;
            return this.deps.pipeline.refusal(ended.code === UNAUTHORIZED_CLOSE_CODE ? new UnauthenticatedError(message) : new ForbiddenError(message));
          },
        });
        if ('errors' in admitted) return admitted.errors;
        state.operationName = admitted.operation.name?.value ?? state.operationName;
        state.operationType = admitted.operation.operation;
        if (admitted.subscriptionField !== undefined) {
          state.subscriptionCounted = true;
          state.subscriptionField = admitted.subscriptionField;
          this.deps.metrics.subscriptionStarted(state.subscriptionField);
        }
        state.executing = true;
        this.running.add(state);
        return admitted.args;
      },
      onOperation: async (ctx, id, payload, args, result) => {
        const state = this.stateOf(ctx).get(id);
        const requestId = (args.contextValue as { requestId?: unknown } | undefined)?.requestId;
        if (state && typeof requestId === 'string') state.requestId = requestId;
        return options.onOperation?.(ctx, id, payload, args, result);
      },
      onNext: async (ctx, id, payload, args, result) => {
        const state = this.stateOf(ctx).get(id);
        for (const error of result.errors ?? []) logErrorDetail(this.deps.logger, error, state?.requestId ?? 'none');
        const sent: FormattedExecutionResult = (await options.onNext?.(ctx, id, payload, args, result)) ?? {
          ...result,
          ...(result.errors ? { errors: result.errors.map((error) => error.toJSON()) } : {}),
        };
        const errors = sent.errors && withRequestId(sent.errors, state?.requestId);
        if (state) state.outcome = outcomeOf(sent.data, errors);
        return errors ? { ...sent, errors } : sent;
      },
      onError: async (ctx, id, payload, errors) => {
        const state = this.stateOf(ctx).get(id);
        for (const error of errors) logErrorDetail(this.deps.logger, error, state?.requestId ?? 'none');
        const sent = withRequestId((await options.onError?.(ctx, id, payload, errors)) ?? errors.map((error) => error.toJSON()), state?.requestId);
        if (state) {
          state.outcome = outcomeOf(null, sent);
          if (!state.executing) this.finish(ctx, id, state);
        }
        return sent;
      },
      onComplete: async (ctx, id, payload) => {
        const state = this.stateOf(ctx).get(id);
        if (state) this.finish(ctx, id, state);
        await options.onComplete?.(ctx, id, payload);
      },
      onClose: async (ctx, code, reason) => {
        // Operations still open here were cut short: the client went, or executing one threw and graphql-ws closed the socket.
        for (const [id, state] of this.stateOf(ctx)) this.finish(ctx, id, state, 'aborted');
        await options.onClose?.(ctx, code, reason);
      },
    };
  }

  private async begin(ctx: ConnectionContext, id: string, operationName: string | undefined): Promise<OperationState> {
    const principal = await this.principalOf(ctx);
    const state: OperationState = {
      started: performance.now(),
      principal: describePrincipal(principal),
      capKey: liveWorkKey(principal, () => ctx.extra.remoteAddress),
      rateKey: rateLimitKey(principal, () => ctx.extra.remoteAddress),
      operationName,
      operationType: undefined,
      requestId: newRequestId(),
      executing: false,
    };
    this.stateOf(ctx).set(id, state);
    // Waits for the shared bucket (Redis), as HTTP does, so the allowance is one across instances on both transports.
    const decision = await this.deps.limiter.admit(state.rateKey);
    if (!decision.allowed) state.retryAfterSeconds = decision.retryAfterSeconds;
    return state;
  }

  /** Subscriptions counted on this socket: at most WS_MAX_SUBSCRIPTIONS_PER_SOCKET, so a walk of them is short. */
  private activeSubscriptions(ctx: object): number {
    let active = 0;
    for (const state of this.stateOf(ctx).values()) if (state.subscriptionCounted) active += 1;
    return active;
  }

  private finish(ctx: object, id: string, state: OperationState, forced?: OperationOutcome): void {
    this.stateOf(ctx).delete(id);
    this.running.delete(state);
    if (state.subscriptionCounted) this.deps.caps.release(state.capKey);
    if (state.subscriptionField) this.deps.metrics.subscriptionEnded(state.subscriptionField);
    this.deps.recorder.record({
      requestId: state.requestId,
      principal: state.principal,
      transport: 'ws',
      operationName: state.operationName,
      operationType: state.operationType,
      durationMs: performance.now() - state.started,
      ...(state.outcome ?? { outcome: forced ?? 'success' }),
    });
  }

  private stateOf(ctx: object): Map<string, OperationState> {
    let states = this.operations.get(ctx);
    if (!states) {
      states = new Map();
      this.operations.set(ctx, states);
    }
    return states;
  }

  /**
   * Once per connection, kept on it for the operations' contexts too (graphql-ws.server.ts): its credentials
   * cannot change on an open socket. The socket is registered under the session its token names before the
   * session is looked up, and under its user before the user is trusted (src/platform/live/principal-sockets.ts),
   * so no revocation announced meanwhile misses it.
   */
  private principalOf(ctx: ConnectionContext): Promise<Principal> {
    const connection = ctx.extra;
    let principal = connection.principal;
    if (!principal) {
      const authorization = typeof ctx.connectionParams?.authorization === 'string' ? ctx.connectionParams.authorization : undefined;
      const credentials = { authorization, cookie: connection.headers.cookie };
      this.deps.sockets.claim(connection.socket, this.deps.principals.claimedSessionKey(credentials));
      const lookup = this.deps.revocations.begin();
      const resolving = this.deps.principals.resolve(credentials);
      const resolved: Promise<Principal> = resolving.then(
        (found) => {
          this.deps.sockets.add(
            found,
            connection.socket,
            liveWorkKey(found, () => connection.remoteAddress),
            lookup,
          );
          this.deps.revocations.end(lookup);
          return found;
        },
        (error: unknown) => {
          this.deps.revocations.end(lookup);
          throw error;
        },
      );
      connection.principal = principal = resolved;
      // A store hiccup must not pin a failure to the connection for its lifetime.
      resolved.catch(() => {
        if (connection.principal === resolved) connection.principal = undefined;
      });
    }
    return principal;
  }
}
