import { GraphQLError } from 'graphql';
import type { ErrorCode } from '../errors/gateway-errors';

/**
 * Like the rate limit, the caps have no code of their own in the fixed list (docs/api.md): a subscription past one
 * is FORBIDDEN with `reason: SUBSCRIPTION_LIMIT`, `limit` (the setting's name) and `max` (its value).
 */
export const SUBSCRIPTION_LIMIT_REASON = 'SUBSCRIPTION_LIMIT';

/**
 * Caps on the subscriptions live at once: per socket (WS_MAX_SUBSCRIPTIONS_PER_SOCKET) and per principal on this
 * instance (MAX_SUBSCRIPTIONS_PER_PRINCIPAL), checked when a subscription starts, so delivering an event costs
 * nothing more. The rate limit only slows how fast they are opened; these bound how many stay open.
 */
export class SubscriptionCaps {
  private readonly byPrincipal = new Map<string, number>();

  constructor(
    private readonly perSocket: number,
    private readonly perPrincipal: number,
  ) {}

  /** Counts one more subscription of `principalKey`, or answers why not (the socket already has `onSocket`). */
  admit(onSocket: number, principalKey: string): GraphQLError | undefined {
    if (onSocket >= this.perSocket) {
      return limitError(`Too many subscriptions on this WebSocket: at most ${this.perSocket}`, 'WS_MAX_SUBSCRIPTIONS_PER_SOCKET', this.perSocket);
    }
    const held = this.byPrincipal.get(principalKey) ?? 0;
    if (held >= this.perPrincipal) {
      return limitError(
        `Too many subscriptions for this principal on this gateway instance: at most ${this.perPrincipal}`,
        'MAX_SUBSCRIPTIONS_PER_PRINCIPAL',
        this.perPrincipal,
      );
    }
    this.byPrincipal.set(principalKey, held + 1);
    return undefined;
  }

  release(principalKey: string): void {
    const held = this.byPrincipal.get(principalKey) ?? 0;
    if (held <= 1) this.byPrincipal.delete(principalKey);
    else this.byPrincipal.set(principalKey, held - 1);
  }

  /** Subscriptions counted for a principal (tests). */
  held(principalKey: string): number {
    return this.byPrincipal.get(principalKey) ?? 0;
  }
}

function limitError(what: string, limit: string, max: number): GraphQLError {
  return new GraphQLError(`${what} (${limit}); complete one before starting another.`, {
    extensions: { code: 'FORBIDDEN' satisfies ErrorCode, reason: SUBSCRIPTION_LIMIT_REASON, limit, max },
  });
}
