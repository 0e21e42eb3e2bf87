/** Calls `changed` whenever what `key` names may have changed; resolves once it is in place, with a function that stops it. */
export type WatchChanges = (key: string, changed: () => void) => Promise<() => Promise<void>>;

export interface CoalescedReadsOptions {
  /** Tells of every change that does not come from this instance (for refunds: the events on the key's topic). */
  watch: WatchChanges;
  /** How long an ended read still serves whoever asks, while nothing has changed. */
  reuseMs: number;
}

/**
 * Reads of one key share provider calls: a reconnect storm of thousands of subscribers to one payment costs a read
 * now and then, not one per subscriber.
 *
 * A subscription asks for its current state only once its own listener is in place, so nothing published after
 * that is missed; the state it is given must not be older than that moment's. A read qualifies when a watch on
 * the key was in place before it started and has seen no change since: anything published after the read started
 * either reached the watch before the asker listened (the read is then no longer shared) or reaches the asker's
 * listener too, as both listen to the same topic and an event goes to whoever listens when it is delivered. Such
 * a read is shared while it is under way and for `reuseMs` after it ended. Everyone else asks for the next read,
 * which starts in the turn after its first asker, or once the read under way has ended (one read per key at a
 * time), and which all of them share.
 *
 * `changed(key)` is for changes this instance makes itself (a refund it created), which no event announces.
 */
export class CoalescedReads<T> {
  private readonly keys = new Map<string, KeyReads<T>>();

  constructor(private readonly options: CoalescedReadsOptions) {}

  read(key: string, load: () => Promise<T>): Promise<T> {
    let state = this.keys.get(key);
    if (!state) this.keys.set(key, (state = { watch: undefined, shared: undefined, next: undefined, inFlight: undefined, expiry: undefined }));
    if (state.shared) return state.shared;
    if (state.next) return state.next;
    const reads = state;
    const previous = reads.inFlight;
    const next = (previous ? previous.then(ignore, ignore) : Promise.resolve())
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(() => this.watching(key, reads))
      .then((watched) => {
        // Whoever asks from now on may have started listening after this read began: they share it only while
        // the watch sees no change, and join the next one otherwise.
        reads.next = undefined;
        const reading = load();
        reads.inFlight = reading;
        if (watched) reads.shared = reading;
        reading.then(
          () => this.ended(key, reads, reading, true),
          () => this.ended(key, reads, reading, false),
        );
        return reading;
      });
    reads.next = next;
    return next;
  }

  /** What `key` names has changed here: the next asker gets a new read. */
  changed(key: string): void {
    const state = this.keys.get(key);
    if (!state) return;
    state.shared = undefined;
    this.forgetIfIdle(key, state);
  }

  /** Stops every watch (the gateway is closing). */
  async close(): Promise<void> {
    const states = [...this.keys.values()];
    this.keys.clear();
    await Promise.all(states.map((state) => this.stopWatching(state)));
  }

  /** True once the key's watch is in place; false when it could not be set up (nothing is shared then). */
  private async watching(key: string, state: KeyReads<T>): Promise<boolean> {
    state.watch ??= this.options.watch(key, () => this.changed(key));
    try {
      await state.watch;
      return true;
    } catch {
      if (this.keys.get(key) === state) state.watch = undefined;
      return false;
    }
  }

  private ended(key: string, state: KeyReads<T>, reading: Promise<T>, succeeded: boolean): void {
    if (state.inFlight === reading) state.inFlight = undefined;
    if (state.shared === reading) {
      if (succeeded) {
        clearTimeout(state.expiry);
        state.expiry = setTimeout(() => {
          if (state.shared === reading) state.shared = undefined;
          this.forgetIfIdle(key, state);
        }, this.options.reuseMs);
        // A kept read must not keep the process alive.
        state.expiry.unref();
        return;
      }
      state.shared = undefined;
    }
    this.forgetIfIdle(key, state);
  }

  private forgetIfIdle(key: string, state: KeyReads<T>): void {
    if (state.shared || state.next || state.inFlight || this.keys.get(key) !== state) return;
    this.keys.delete(key);
    void this.stopWatching(state);
  }

  private async stopWatching(state: KeyReads<T>): Promise<void> {
    clearTimeout(state.expiry);
    const watch = state.watch;
    state.watch = undefined;
    if (!watch) return;
    try {
      const stop = await watch;
      await stop();
    } catch {
      // A watch that never started, or a bus already closed: nothing left to stop.
    }
  }
}

interface KeyReads<T> {
  /** The watch on the key, started before its first read. */
  watch: Promise<() => Promise<void>> | undefined;
  /** The read anyone asking may share: under way or recently ended, with no change seen since it started. */
  shared: Promise<T> | undefined;
  /** The read not started yet, which everyone asking joins. */
  next: Promise<T> | undefined;
  /** The read under way. */
  inFlight: Promise<T> | undefined;
  expiry: NodeJS.Timeout | undefined;
}

function ignore(): void {}
