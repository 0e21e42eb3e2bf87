import type { EventBus } from '../platform/live/event-bus';
import { topics } from '../platform/live/topics';

/**
 * A change to who may see what, announced on the event bus so that every instance acts on it within a moment:
 * - `logout`: one session ended; its WebSockets close;
 * - `disconnected`: one bank connection was revoked; the user's WebSockets close (their subscriptions were
 *   authorised with it) and the connection's tokens are forgotten;
 * - `user-revoked`: the user is gone; all their sessions and WebSockets end;
 * - `connected`: a bank was added; nothing closes, but answers kept for the user no longer show all they may see.
 */
export type IdentityEvent =
  | { kind: 'logout'; userId: string; sessionKey: string }
  | { kind: 'disconnected'; userId: string; connectionId: string }
  | { kind: 'user-revoked'; userId: string }
  | { kind: 'connected'; userId: string; connectionId: string };

const KINDS = new Set<IdentityEvent['kind']>(['logout', 'disconnected', 'user-revoked', 'connected']);

/**
 * The publishing instance hears its own event at once, before the bus carries it (and again when the bus does:
 * listeners act idempotently), so nothing on it runs for a revoked principal while the event is on its way.
 */
export class IdentityEvents {
  private readonly local = new Set<(event: IdentityEvent) => void>();

  constructor(private readonly bus: EventBus) {}

  async publish(event: IdentityEvent): Promise<void> {
    // Under way before any local handler runs, so one that throws cannot keep other instances from hearing it.
    const published = this.bus.publish(topics.identity, event);
    try {
      for (const handler of [...this.local]) handler(event);
    } finally {
      await published;
    }
  }

  /** Resolves once `handler` hears every later event on any instance; the function it gives stops listening. */
  async listen(handler: (event: IdentityEvent) => void): Promise<() => Promise<void>> {
    const stop = await this.bus.listen(topics.identity, (payload) => {
      if (isIdentityEvent(payload)) handler(payload);
    });
    this.local.add(handler);
    return async () => {
      this.local.delete(handler);
      await stop();
    };
  }
}

function isIdentityEvent(payload: unknown): payload is IdentityEvent {
  const value = payload as Partial<IdentityEvent> | null;
  return typeof value === 'object' && value !== null && typeof value.userId === 'string' && KINDS.has(value.kind as IdentityEvent['kind']);
}
