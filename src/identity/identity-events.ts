import type { Revocation } from '../platform/access/revocation';

/**
 * A change to who may see what, announced on the event bus so that every instance acts on it within a moment: a
 * revocation (a logout, a bank disconnected, a revoked user; src/platform/access/revocation.ts), whose
 * disconnection also makes the connection's tokens forgotten, or
 * - `connected`: a bank was added; nothing closes, but answers kept for the user no longer show all they may see.
 */
export type IdentityEvent = Revocation | { kind: 'connected'; userId: string; connectionId: string };

const KINDS = new Set<IdentityEvent['kind']>(['logout', 'disconnected', 'user-revoked', 'connected']);

/** The event bus as identity uses it (the composition root hands it the gateway's bus). */
export interface EventChannel {
  publish(topic: string, payload: unknown): Promise<void>;
  /** Resolves once the handler hears every later event on any instance; the function it gives stops listening. */
  listen(topic: string, handler: (payload: unknown) => void): Promise<() => Promise<void>>;
}

export interface IdentityEventsDeps {
  bus: EventChannel;
  /** The bus topic identity events travel on. */
  topic: string;
}

/**
 * The publishing instance hears its own event at once, before the bus carries it (and again when the bus does:
 * listeners act idempotently), so nothing on it runs for a revoked principal while the event is on its way.
 */
export class IdentityEvents {
  private readonly local = new Set<(event: IdentityEvent) => void>();

  constructor(private readonly deps: IdentityEventsDeps) {}

  async publish(event: IdentityEvent): Promise<void> {
    // Under way before any local handler runs, so one that throws cannot keep other instances from hearing it.
    const published = this.deps.bus.publish(this.deps.topic, event);
    try {
      for (const handler of [...this.local]) handler(event);
    } finally {
      await published;
    }
  }

  /** Resolves once `handler` hears every later event on any instance; the function it gives stops listening. */
  async listen(handler: (event: IdentityEvent) => void): Promise<() => Promise<void>> {
    const stop = await this.deps.bus.listen(this.deps.topic, (payload) => {
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
