import { CoalescedReads } from '../../../../src/platform/live/coalesced-reads';

/** A watch the test drives: `change(key)` is an event on the key's topic. */
class FakeWatch {
  readonly log: string[] = [];
  private readonly listeners = new Map<string, () => void>();
  failNext = false;

  readonly watch = async (key: string, changed: () => void): Promise<() => Promise<void>> => {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('bus down');
    }
    this.log.push(`watch ${key}`);
    this.listeners.set(key, changed);
    return async () => {
      this.log.push(`unwatch ${key}`);
      this.listeners.delete(key);
    };
  };

  change(key: string): void {
    this.listeners.get(key)?.();
  }

  watching(key: string): boolean {
    return this.listeners.has(key);
  }
}

/** A load that counts its calls and can be held open. */
function counter(log: string[] = []) {
  let calls = 0;
  const held: (() => void)[] = [];
  return {
    get calls() {
      return calls;
    },
    load: async (): Promise<number> => {
      const call = ++calls;
      log.push(`load ${call}`);
      return call;
    },
    heldLoad: (): Promise<number> => {
      const call = ++calls;
      log.push(`load ${call}`);
      return new Promise<number>((resolve) => held.push(() => resolve(call)));
    },
    release(): void {
      for (const finish of held.splice(0)) finish();
    },
  };
}

describe('CoalescedReads', () => {
  let reads: CoalescedReads<number> | undefined;
  afterEach(async () => {
    await reads?.close();
    reads = undefined;
  });
  const make = (watch: FakeWatch, reuseMs = 60_000): CoalescedReads<number> => (reads = new CoalescedReads<number>({ watch: watch.watch, reuseMs }));

  it('gives everyone who asks in the same turn one read, started after the last of them asked and after the watch is in place', async () => {
    const watch = new FakeWatch();
    const reads = make(watch);
    const reader = counter(watch.log);
    const first = reads.read('payment', reader.load);
    watch.log.push('a');
    const second = reads.read('payment', reader.load);
    watch.log.push('b');
    expect(await Promise.all([first, second])).toEqual([1, 1]);
    expect(watch.log).toEqual(['a', 'b', 'watch payment', 'load 1']);
  });

  it('serves a read that ended to whoever asks later, while nothing changed, and keeps keys apart', async () => {
    const watch = new FakeWatch();
    const reads = make(watch);
    const reader = counter();
    expect(await reads.read('a', reader.load)).toBe(1);
    expect(await Promise.all([reads.read('a', reader.load), reads.read('b', reader.load)])).toEqual([1, 2]);
    expect(reader.calls).toBe(2);
  });

  it('shares a read under way with whoever asks meanwhile, while nothing changed', async () => {
    const watch = new FakeWatch();
    const reads = make(watch);
    const reader = counter();
    const first = reads.read('payment', reader.heldLoad);
    await waitFor(() => reader.calls === 1);
    const second = reads.read('payment', reader.heldLoad);
    reader.release();
    expect(await Promise.all([first, second])).toEqual([1, 1]);
    expect(reader.calls).toBe(1);
  });

  it('after a change, reads again for whoever asks; a change during a read makes later askers wait for the next, started once it ended', async () => {
    const watch = new FakeWatch();
    const reads = make(watch);
    const log: string[] = [];
    const reader = counter(log);
    expect(await reads.read('payment', reader.load)).toBe(1);
    watch.change('payment');
    const first = reads.read('payment', reader.heldLoad);
    await waitFor(() => reader.calls === 2);
    watch.change('payment');
    const second = reads.read('payment', reader.load);
    const third = reads.read('payment', reader.load);
    await turns(3);
    // Not while the read under way is: it may have begun before the change, which the askers may not get as an event.
    expect(log).toEqual(['load 1', 'load 2']);
    log.push('end 2');
    reader.release();
    expect(await Promise.all([first, second, third])).toEqual([2, 3, 3]);
    expect(log).toEqual(['load 1', 'load 2', 'end 2', 'load 3']);
  });

  it('reads again once reuseMs has passed, and then stops watching an idle key', async () => {
    const watch = new FakeWatch();
    const reads = make(watch, 20);
    const reader = counter();
    expect(await reads.read('payment', reader.load)).toBe(1);
    expect(watch.watching('payment')).toBe(true);
    await waitFor(() => !watch.watching('payment'));
    expect(await reads.read('payment', reader.load)).toBe(2);
    expect(watch.log).toEqual(['watch payment', 'unwatch payment', 'watch payment']);
  });

  it('a change made here (changed) ends the sharing of that key only', async () => {
    const watch = new FakeWatch();
    const reads = make(watch);
    const reader = counter();
    await Promise.all([reads.read('a', reader.load), reads.read('b', reader.load)]);
    reads.changed('a');
    expect(await Promise.all([reads.read('a', reader.load), reads.read('b', reader.load)])).toEqual([3, 2]);
  });

  it('a failed read fails its askers only and is not kept; the read after it still runs', async () => {
    const watch = new FakeWatch();
    const reads = make(watch);
    let fail!: (error: Error) => void;
    const failed = reads.read('payment', () => new Promise<number>((_resolve, reject) => (fail = reject)));
    await turns(3);
    fail(new Error('provider down'));
    await expect(failed).rejects.toThrow('provider down');
    expect(await reads.read('payment', async () => 7)).toBe(7);
    expect(await reads.read('payment', async () => 8)).toBe(7);
  });

  it('without a watch (the bus could not listen), shares a read only with those who asked before it started', async () => {
    const watch = new FakeWatch();
    const reads = make(watch);
    const reader = counter();
    watch.failNext = true;
    expect(await reads.read('payment', reader.load)).toBe(1);
    // The watch is tried again for the next read, and with it in place that read is shared.
    expect(await reads.read('payment', reader.load)).toBe(2);
    expect(await reads.read('payment', reader.load)).toBe(2);
  });

  it('close stops every watch', async () => {
    const watch = new FakeWatch();
    const reads = make(watch);
    const reader = counter();
    await Promise.all([reads.read('a', reader.load), reads.read('b', reader.load)]);
    await reads.close();
    expect(watch.watching('a') || watch.watching('b')).toBe(false);
  });
});

/** Lets `n` turns of the event loop pass. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

async function waitFor(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the condition');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
