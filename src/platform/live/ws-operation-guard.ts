import type { ExecutionArgs } from 'graphql';
import type { ServerOptions } from 'graphql-ws';
import type { Principal, PrincipalSource } from '../access/principal';
import type { RecentRevocations } from '../access/recent-revocations';
import { ForbiddenError, UnauthenticatedError } from '../errors/gateway-errors';
import { describePrincipal, newRequestId, type OperationContext } from '../graphql/operation-context';
import type { OperationPipeline, OperationResults } from '../graphql/operation-pipeline';
import { isOwnPage } from '../graphql/persisted/persisted-documents';
import type { OperationOutcome } from '../observability/gateway-metrics';
import { principalKey } from '../http/principal-key';
import type { LiveOperation, OperationStages } from './operation-stages';
import { UNAUTHORIZED_CLOSE_CODE, type PrincipalSockets } from './principal-sockets';
import type { SocketConnection } from './ws-transport';

/** The part of graphql-ws's per-connection context the guard reads. */
interface ConnectionContext {
  readonly connectionParams?: Readonly<Record<string, unknown>>;
  readonly extra: SocketConnection;
}

interface WsOperation {
  live: LiveOperation;
  principal: Principal;
  /** Until onSubscribe hands back execution arguments, an error is the operation's last event (no onComplete). */
  executing: boolean;
}

export interface WsOperationGuardDeps {
  pipeline: OperationPipeline;
  /** The stage list every live operation runs (operation-stages.ts), the same as the HTTP streams'. */
  stages: OperationStages;
  principals: PrincipalSource;
  /** Each user's sockets, so a revocation can close them (src/platform/live/principal-sockets.ts). */
  sockets: PrincipalSockets;
  /** Revocations heard while a socket's principal was looked up (src/platform/access/recent-revocations.ts). */
  revocations: RecentRevocations;
  /** The request context of one operation (a query, a mutation, or a subscription for its whole life). */
  createContext(principal: Principal, requestId: string): OperationContext;
}

/** The graphql-ws hooks the guard answers: every one that concerns an operation rather than the socket. */
export type OperationHooks = Pick<
  ServerOptions<Record<string, unknown>, SocketConnection>,
  'onSubscribe' | 'execute' | 'onNext' | 'onError' | 'onComplete' | 'onClose'
>;

/**
 * The WebSocket's adapter onto the operation stages (operation-stages.ts): graphql-ws's hooks turned into the
 * stages' points, an operation's state kept per socket and id from its `subscribe` message to its record, and the
 * socket's principal resolved once, where every revocation can find it.
 */
export class WsOperationGuard {
  private readonly operations = new WeakMap<object, Map<string, WsOperation>>();
  private readonly byContext = new WeakMap<object, LiveOperation>();
  private readonly running = new Set<WsOperation>();

  constructor(private readonly deps: WsOperationGuardDeps) {}

  /** Resolves once no query or mutation is running over any socket (open subscriptions do not count), or at the deadline. */
  async drain(deadline: number): Promise<void> {
    const busy = (): boolean => [...this.running].some(({ live }) => live.prepared?.operation.operation !== 'subscription');
    while (busy() && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  hooks(): OperationHooks {
    const { stages } = this.deps;
    return {
      onSubscribe: async (ctx, id, payload) => {
        const connection = ctx as unknown as ConnectionContext;
        const operation = await this.begin(connection, id, payload);
        const admitted = await stages.admit(operation.live);
        if ('errors' in admitted) return admitted.errors;
        operation.executing = true;
        this.running.add(operation);
        return admitted.args;
      },
      // Queries and mutations only: subscriptions go through `subscribe` (the fan-out).
      // graphql-ws builds the context (contextFor) before it executes.
      execute: (args: ExecutionArgs): Promise<OperationResults> => stages.execute(this.byContext.get(args.contextValue as object)!, args),
      onNext: (ctx, id, _payload, args, result) => {
        const live = this.stateOf(ctx).get(id)?.live;
        const context = args.contextValue as OperationContext | undefined;
        const sent = live ? stages.format(live, result, context) : this.deps.pipeline.clientResult(result, context);
        return sent === result ? undefined : (sent as typeof result);
      },
      // Errors before execution: the operation's refusal, and its last event.
      onError: (ctx, id, _payload, errors) => {
        const operation = this.stateOf(ctx).get(id);
        if (!operation) return this.deps.pipeline.clientErrors(errors, undefined);
        const sent = stages.refused(operation.live, errors);
        if (!operation.executing) this.finish(ctx, id, operation);
        return sent.errors ? [...sent.errors] : [];
      },
      onComplete: (ctx, id) => {
        const operation = this.stateOf(ctx).get(id);
        if (operation) this.finish(ctx, id, operation);
      },
      onClose: (ctx) => {
        // Operations still open here were cut short: the client went, or executing one threw and graphql-ws closed the socket.
        for (const [id, operation] of this.stateOf(ctx)) this.finish(ctx, id, operation, 'aborted');
      },
    };
  }

  /** graphql-ws's `context` for an operation its onSubscribe admitted: built once, its request id the operation's. */
  contextFor(ctx: object, id: string): OperationContext {
    const operation = this.stateOf(ctx).get(id)!;
    const context = this.deps.stages.context(operation.live, this.deps.createContext(operation.principal, operation.live.requestId));
    this.byContext.set(context, operation.live);
    return context;
  }

  private async begin(ctx: ConnectionContext, id: string, payload: Parameters<NonNullable<OperationHooks['onSubscribe']>>[2]): Promise<WsOperation> {
    const started = performance.now();
    const principal = await this.principalOf(ctx);
    const { extra } = ctx;
    const live: LiveOperation = {
      requestId: newRequestId(),
      transport: 'ws',
      started,
      principal: describePrincipal(principal),
      principalKey: principalKey(principal, () => extra.remoteAddress),
      // graphql-ws requires `query` to be a string: a client naming a persisted document sends "" with it.
      document: payload,
      fromOwnPage: isOwnPage(extra.headers),
      operationName: payload.operationName,
      variables: payload.variables,
      allowanceSpent: false,
      onConnection: this.activeSubscriptions(ctx),
      mutationsAllowed: true,
      endedBecause: () => {
        const ended = this.deps.sockets.endedBecause(extra.socket);
        if (ended === undefined) return undefined;
        const message = `This WebSocket was closed: ${ended.reason}.`;
        return this.deps.pipeline.refusal(ended.code === UNAUTHORIZED_CLOSE_CODE ? new UnauthenticatedError(message) : new ForbiddenError(message));
      },
    };
    const operation: WsOperation = { live, principal, executing: false };
    this.stateOf(ctx).set(id, operation);
    return operation;
  }

  /** Subscriptions counted on this socket: at most WS_MAX_SUBSCRIPTIONS_PER_SOCKET, so a walk of them is short. */
  private activeSubscriptions(ctx: object): number {
    let active = 0;
    for (const { live } of this.stateOf(ctx).values()) if (live.subscriptionField !== undefined) active += 1;
    return active;
  }

  private finish(ctx: object, id: string, operation: WsOperation, forced?: OperationOutcome): void {
    this.stateOf(ctx).delete(id);
    this.running.delete(operation);
    this.deps.stages.finish(operation.live, forced);
  }

  private stateOf(ctx: object): Map<string, WsOperation> {
    let states = this.operations.get(ctx);
    if (!states) {
      states = new Map();
      this.operations.set(ctx, states);
    }
    return states;
  }

  /**
   * Once per connection, kept on it for the operations' contexts too: its credentials cannot change on an open
   * socket. The socket is registered under the session its token names before the session is looked up, and under
   * its user before the user is trusted (src/platform/live/principal-sockets.ts), so no revocation announced
   * meanwhile misses it.
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
            principalKey(found, () => connection.remoteAddress),
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
