import type { Session, SessionStore } from '../../src/identity/session.store';

export interface Held {
  /** Resolves once the held lookup has read the store. */
  reached: Promise<void>;
  release(): void;
}

/** Holds the next session lookup after it has read the store, until released: the race's window, made as wide as a test needs. */
export function holdNextSessionLookup(sessions: SessionStore): Held {
  const original = sessions.get.bind(sessions);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let reached!: () => void;
  const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
  jest.spyOn(sessions, 'get').mockImplementationOnce(async (...args: Parameters<SessionStore['get']>): Promise<Session | undefined> => {
    const found = await original(...args);
    reached();
    await gate;
    return found;
  });
  return { reached: reachedPromise, release };
}
