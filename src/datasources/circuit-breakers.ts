import { CircuitState, ConsecutiveBreaker, circuitBreaker, handleWhen, type CircuitBreakerPolicy } from 'cockatiel';

export interface CircuitBreakerSettings {
  /** Consecutive failed sends on one route that open its circuit. */
  failures: number;
  /** How long an open circuit fails fast before one trial call may go through. */
  cooldownMs: number;
}

/** What counts against a route: a thrown error (no answer) or an answer (a 5xx). Anything else counts for nothing. */
export interface FailureRules {
  error(error: Error): boolean;
  answer(answer: unknown): boolean;
}

export type CircuitStateName = 'closed' | 'open' | 'half-open';

const STATE_NAMES: Record<CircuitState, CircuitStateName> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half-open',
  [CircuitState.Isolated]: 'open',
};

/**
 * A cockatiel circuit breaker per provider route (`data.accounts`, `payouts.create`, …): a route whose sends keep
 * failing is not called for a cool-down, so a dead provider costs the app one quick UPSTREAM_UNAVAILABLE instead of
 * three slow tries per call, and the provider is not hammered while it recovers. Routes are separate because one
 * failing endpoint says little about the others.
 */
export class CircuitBreakers {
  private readonly breakers = new Map<string, CircuitBreakerPolicy>();

  constructor(
    private readonly settings: CircuitBreakerSettings,
    private readonly rules: FailureRules,
    private readonly onStateChange?: (route: string, state: CircuitStateName) => void,
  ) {}

  /** Runs one send on `route`'s breaker; rejects with cockatiel's BrokenCircuitError while the circuit is open. */
  execute<T>(route: string, send: () => Promise<T>): Promise<T> {
    return this.breakerFor(route).execute(send);
  }

  state(route: string): CircuitStateName {
    const breaker = this.breakers.get(route);
    return breaker ? STATE_NAMES[breaker.state] : 'closed';
  }

  private breakerFor(route: string): CircuitBreakerPolicy {
    let breaker = this.breakers.get(route);
    if (!breaker) {
      const policy = handleWhen((error) => this.rules.error(error)).orWhenResult((answer) => this.rules.answer(answer));
      breaker = circuitBreaker(policy, { halfOpenAfter: this.settings.cooldownMs, breaker: new ConsecutiveBreaker(this.settings.failures) });
      breaker.onStateChange((state) => this.onStateChange?.(route, STATE_NAMES[state]));
      this.breakers.set(route, breaker);
    }
    return breaker;
  }
}
