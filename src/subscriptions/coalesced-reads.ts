/**
 * Reads of one key asked for within the same turn of the event loop share one provider call, started once all of
 * them have asked. A subscription asks for its current state only after its listener is in place, so the shared
 * read still starts after every subscriber that joined it was listening: nothing published meanwhile is missed.
 * A reconnect storm of thousands of subscribers to one payment then costs a few signed reads, not thousands.
 */
export class CoalescedReads<T> {
  private readonly pending = new Map<string, Promise<T>>();

  read(key: string, load: () => Promise<T>): Promise<T> {
    const joined = this.pending.get(key);
    if (joined) return joined;
    const read = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      // Whoever asks from now on may have started listening after this read began: they get a read of their own.
      this.pending.delete(key);
      return load();
    });
    this.pending.set(key, read);
    return read;
  }
}
