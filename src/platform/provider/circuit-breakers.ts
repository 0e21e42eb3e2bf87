import { LRUCache } from 'lru-cache';
import { CircuitState, circuitBreaker, handleWhen, type CircuitBreakerPolicy, type IBreaker, type Policy } from 'cockatiel';

export interface CircuitBreakerSettings {
  /** Consecutive failed sends on one route (of one bank connection, for a connection's calls) that open its circuit. */
  failures: number;
  /** How long an open circuit fails fast before one trial call may go through. */
  cooldownMs: number;
  /**
   * How many distinct bank connections must open their own circuit on a route, with no call on that route
   * succeeding in between, before the route is opened for every connection.
   */
  spreadConnections: number;
}

/** What counts against a route: a thrown error (no answer) or an answer (a 5xx). Anything else counts for nothing. */
export interface FailureRules {
  error(error: Error): boolean;
  answer(answer: unknown): boolean;
}

export type CircuitStateName = 'closed' | 'open' | 'half-open';

/** A connection's circuit on a route opened or closed; `openOnRoute` is how many of the route's are open now. */
export interface ConnectionCircuitChange {
  route: string;
  connectionId: string;
  state: 'open' | 'closed';
  openOnRoute: number;
}

const STATE_NAMES: Record<CircuitState, CircuitStateName> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half-open',
  [CircuitState.Isolated]: 'open',
};

/**
 * Connection circuits kept per route. Connections are unbounded in number, so past this
 * the one used longest ago is forgotten (an open one then closes early, which costs the provider a few more calls).
 */
const CONNECTION_CIRCUITS_PER_ROUTE = 1_000;

/**
 * Cockatiel circuit breakers for provider routes (`data.accounts`, `payouts.create`, …): a route whose sends keep
 * failing is not called for a cool-down, so a dead provider costs the app one quick UPSTREAM_UNAVAILABLE instead of
 * three slow tries per call, and the provider is not hammered while it recovers. Routes are separate because one
 * failing endpoint says little about the others.
 *
 * A call made with a bank connection's token runs on that connection's own circuit for the route, so one user's
 * failing account (the bank behind it down, an account the provider cannot read) fails fast for that connection
 * only and never refuses another user. The route as a whole opens for everyone only when its failures span
 * `spreadConnections` distinct connections with no success on the route between them: that is the provider
 * failing, not one connection's data. Calls without a connection (the app's own token) share the route's circuit.
 */
export class CircuitBreakers {
  private readonly routes = new Map<string, RouteCircuits>();
  private readonly policy: Policy;

  constructor(
    private readonly settings: CircuitBreakerSettings,
    rules: FailureRules,
    private readonly onStateChange?: (route: string, state: CircuitStateName) => void,
    private readonly onConnectionChange?: (change: ConnectionCircuitChange) => void,
  ) {
    this.policy = handleWhen((error) => rules.error(error)).orWhenResult((answer) => rules.answer(answer));
  }

  /**
   * Runs one send on `route`'s breaker, or on the breaker of `connectionId` on that route; rejects with cockatiel's
   * BrokenCircuitError while the circuit is open. Two map lookups and no allocation once both exist: this runs for
   * every provider call.
   */
  execute<T>(route: string, connectionId: string | undefined, send: () => Promise<T>): Promise<T> {
    const circuits = this.routes.get(route) ?? this.addRoute(route);
    return circuits.breakerFor(connectionId).execute(send);
  }

  /** The route-wide circuit's state. */
  state(route: string): CircuitStateName {
    const circuits = this.routes.get(route);
    return circuits ? STATE_NAMES[circuits.shared.state] : 'closed';
  }

  /** The state of one connection's circuit on `route`: open only when its own failures opened it. */
  connectionState(route: string, connectionId: string): CircuitStateName {
    const breaker = this.routes.get(route)?.connectionBreaker(connectionId);
    return breaker ? STATE_NAMES[breaker.state] : 'closed';
  }

  private addRoute(route: string): RouteCircuits {
    const circuits = new RouteCircuits(route, this.settings, this.policy, this.onStateChange, this.onConnectionChange);
    this.routes.set(route, circuits);
    return circuits;
  }
}

/** One route: its shared circuit, and one circuit per bank connection that called it. */
class RouteCircuits {
  readonly shared: CircuitBreakerPolicy;
  /** Set when failures spread over enough connections: their calls then run on the shared circuit until it closes. */
  tripped = false;
  /** Connections whose circuit opened since the route last saw a success. */
  readonly failingConnections = new Set<string>();
  openConnections = 0;
  private readonly byConnection = new LRUCache<string, { breaker: ConnectionBreaker; policy: CircuitBreakerPolicy }>({
    max: CONNECTION_CIRCUITS_PER_ROUTE,
    dispose: (forgotten, connectionId, reason) => {
      if (reason === 'evict' && forgotten.breaker.open) this.connectionClosed(connectionId);
    },
  });
  private readonly spread: number;

  constructor(
    readonly route: string,
    private readonly settings: CircuitBreakerSettings,
    private readonly policy: Policy,
    onStateChange: ((route: string, state: CircuitStateName) => void) | undefined,
    private readonly onConnectionChange: ((change: ConnectionCircuitChange) => void) | undefined,
  ) {
    this.spread = settings.spreadConnections;
    this.shared = circuitBreaker(policy, { halfOpenAfter: settings.cooldownMs, breaker: new SharedBreaker(settings.failures, this) });
    this.shared.onStateChange((state) => {
      // A trial that went through closes the route for everyone again; each connection keeps its own circuit.
      if (state === CircuitState.Closed) this.untrip();
      onStateChange?.(route, STATE_NAMES[state]);
    });
  }

  breakerFor(connectionId: string | undefined): CircuitBreakerPolicy {
    if (connectionId === undefined || this.tripped || this.shared.state !== CircuitState.Closed) return this.shared;
    const found = this.byConnection.get(connectionId);
    return found ? found.policy : this.addConnection(connectionId);
  }

  connectionBreaker(connectionId: string): CircuitBreakerPolicy | undefined {
    return this.byConnection.peek(connectionId)?.policy;
  }

  succeeded(): void {
    if (this.failingConnections.size !== 0) this.failingConnections.clear();
  }

  connectionOpened(connectionId: string): void {
    this.openConnections += 1;
    this.onConnectionChange?.({ route: this.route, connectionId, state: 'open', openOnRoute: this.openConnections });
    this.failingConnections.add(connectionId);
    if (this.failingConnections.size >= this.spread) {
      // The next call on the route, whoever makes it, runs on the shared circuit: if it fails too, the route opens.
      this.tripped = true;
      this.failingConnections.clear();
    }
  }

  connectionClosed(connectionId: string): void {
    this.openConnections -= 1;
    this.onConnectionChange?.({ route: this.route, connectionId, state: 'closed', openOnRoute: this.openConnections });
  }

  untrip(): void {
    this.tripped = false;
    this.failingConnections.clear();
  }

  private addConnection(connectionId: string): CircuitBreakerPolicy {
    const breaker = new ConnectionBreaker(this.settings.failures, connectionId, this);
    const policy = circuitBreaker(this.policy, { halfOpenAfter: this.settings.cooldownMs, breaker });
    this.byConnection.set(connectionId, { breaker, policy });
    return policy;
  }
}

/**
 * The route-wide circuit: consecutive failures of calls without a connection, as before; once tripped by failures
 * on several connections, the first failure opens it and the first success stands it down.
 */
class SharedBreaker implements IBreaker {
  state = 0;

  constructor(
    private readonly threshold: number,
    private readonly route: RouteCircuits,
  ) {}

  success(): void {
    this.state = 0;
    if (this.route.tripped) this.route.untrip();
  }

  failure(): boolean {
    this.state += 1;
    return this.state >= this.threshold || this.route.tripped;
  }
}

/**
 * One connection's circuit on a route: consecutive failures open it. It reports its openings and closings to the
 * route, which counts the distinct connections failing; cockatiel calls `failure` and `success` synchronously as
 * each send ends, so no listener (and no allocation) is needed per call.
 */
class ConnectionBreaker implements IBreaker {
  state = 0;
  open = false;

  constructor(
    private readonly threshold: number,
    private readonly connectionId: string,
    private readonly route: RouteCircuits,
  ) {}

  success(): void {
    this.state = 0;
    this.route.succeeded();
    // A half-open trial that succeeded: cockatiel closes the circuit right after this.
    if (this.open) {
      this.open = false;
      this.route.connectionClosed(this.connectionId);
    }
  }

  failure(state: CircuitState): boolean {
    this.state += 1;
    // From half-open cockatiel reopens whatever this returns; the connection already counts as open then.
    if (state === CircuitState.HalfOpen || this.state < this.threshold) return state === CircuitState.HalfOpen;
    if (!this.open) {
      this.open = true;
      this.route.connectionOpened(this.connectionId);
    }
    return true;
  }
}
