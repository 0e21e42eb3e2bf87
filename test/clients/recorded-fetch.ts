/** One HTTP exchange as a client library made it: the JSON it sent and the JSON it got back. */
export interface Exchange {
  sent: { operationName?: string; query?: string; variables?: Record<string, unknown>; extensions?: Record<string, any> };
  answer: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

/** A fetch that passes every request through and keeps what went over the wire, for tests that count round trips. */
export function recordingFetch(): { fetch: typeof fetch; exchanges: Exchange[] } {
  const exchanges: Exchange[] = [];
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const sent = typeof init?.body === 'string' ? (JSON.parse(init.body) as Exchange['sent']) : {};
    exchanges.push({ sent, answer: (await response.clone().json()) as Exchange['answer'] });
    return response;
  };
  return { fetch: recording, exchanges };
}

/** The latest value an observable emitted, read by polling tests (waitFor) instead of sleeping. */
export function latestOf<T>(observable: { subscribe(next: (value: T) => void): { unsubscribe(): void } }): { value(): T | undefined; stop(): void } {
  let latest: T | undefined;
  const subscription = observable.subscribe((value) => {
    latest = value;
  });
  return { value: () => latest, stop: () => subscription.unsubscribe() };
}
