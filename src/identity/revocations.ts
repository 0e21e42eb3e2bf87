import type { EventBus } from '../subscriptions/event-bus';
import { topics } from '../subscriptions/topics';

/**
 * Something that signed a user out: one session (logout), one bank connection (disconnectBank), or the whole user.
 * Published on the event bus, so every instance closes that principal's WebSockets and forgets what it remembered.
 */
export interface Revocation {
  userId: string;
  sessionKey?: string;
  connectionId?: string;
}

export class Revocations {
  constructor(private readonly bus: EventBus) {}

  publish(revocation: Revocation): Promise<void> {
    return this.bus.publish(topics.revocations, revocation);
  }

  /** Resolves once `handler` hears every later revocation on any instance; the function it gives stops listening. */
  listen(handler: (revocation: Revocation) => void): Promise<() => Promise<void>> {
    return this.bus.listen(topics.revocations, (payload) => {
      if (isRevocation(payload)) handler(payload);
    });
  }
}

function isRevocation(payload: unknown): payload is Revocation {
  const value = payload as Partial<Revocation> | null;
  return typeof value === 'object' && value !== null && typeof value.userId === 'string';
}
