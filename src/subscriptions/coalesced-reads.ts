/**
 * Reads of one key share provider calls. Everyone who asks before a read starts joins it, and it starts once all
 * of them have asked: a subscription asks for its current state only after its listener is in place, so the shared
 * read still starts after every subscriber that joined it was listening, and nothing published meanwhile is missed.
 * A read starts in the turn after its first asker, or, while another read of the key is in flight, once that one
 * has ended: whoever asks meanwhile waits for it and shares the next. A reconnect storm of thousands of subscribers
 * to one payment then costs a read per provider round trip, not one per subscriber.
 */
export class CoalescedReads<T> {
  private readonly keys = new Map<string, KeyReads<T>>();

  read(key: string, load: () => Promise<T>): Promise<T> {
    let reads = this.keys.get(key);
    if (!reads) this.keys.set(key, (reads = {}));
    if (reads.next) return reads.next;
    const state = reads;
    const previous = state.inFlight;
    const next = (previous ? previous.then(ignore, ignore) : Promise.resolve())
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(() => {
        // Whoever asks from now on may have started listening after this read began: they join the next one.
        state.next = undefined;
        const reading = load();
        state.inFlight = reading;
        const ended = (): void => {
          if (state.inFlight !== reading) return;
          state.inFlight = undefined;
          if (!state.next) this.keys.delete(key);
        };
        reading.then(ended, ended);
        return reading;
      });
    state.next = next;
    return next;
  }
}

interface KeyReads<T> {
  /** The read not started yet, which everyone asking joins. */
  next?: Promise<T>;
  /** The read under way. */
  inFlight?: Promise<T>;
}

function ignore(): void {}
