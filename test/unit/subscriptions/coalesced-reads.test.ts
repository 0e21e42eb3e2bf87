import { CoalescedReads } from '../../../src/subscriptions/coalesced-reads';

describe('CoalescedReads', () => {
  it('gives everyone who asks in the same turn one read, started after the last of them asked', async () => {
    const reads = new CoalescedReads<number>();
    const asked: string[] = [];
    let calls = 0;
    const load = async () => {
      asked.push('load');
      return ++calls;
    };
    const first = reads.read('payment', load);
    asked.push('a');
    const second = reads.read('payment', load);
    asked.push('b');
    expect(await Promise.all([first, second])).toEqual([1, 1]);
    expect(asked).toEqual(['a', 'b', 'load']);
  });

  it('starts a new read for whoever asks once a read has begun, and keeps keys apart', async () => {
    const reads = new CoalescedReads<string>();
    let calls = 0;
    const first = await reads.read('a', async () => `a${++calls}`);
    const [again, other] = await Promise.all([reads.read('a', async () => `a${++calls}`), reads.read('b', async () => `b${++calls}`)]);
    expect([first, again, other]).toEqual(['a1', 'a2', 'b3']);
  });

  it('while a read is in flight, gives everyone who asks one read, started once it has ended', async () => {
    const reads = new CoalescedReads<number>();
    const events: string[] = [];
    let calls = 0;
    let finishFirst!: () => void;
    const first = reads.read('payment', () => {
      const call = ++calls;
      events.push(`start ${call}`);
      return new Promise<number>((resolve) => (finishFirst = () => resolve(call)));
    });
    await turns(2);
    expect(events).toEqual(['start 1']);
    const load = async (): Promise<number> => {
      const call = ++calls;
      events.push(`start ${call}`);
      return call;
    };
    const second = reads.read('payment', load);
    const third = reads.read('payment', load);
    await turns(3);
    // Not while the first is in flight: the askers may have started listening after it began.
    expect(events).toEqual(['start 1']);
    events.push('end 1');
    finishFirst();
    expect(await Promise.all([first, second, third])).toEqual([1, 2, 2]);
    expect(events).toEqual(['start 1', 'end 1', 'start 2']);
  });

  it('a failed read fails its askers only; the read after it still runs', async () => {
    const reads = new CoalescedReads<number>();
    let fail!: (error: Error) => void;
    const failed = reads.read('payment', () => new Promise<number>((_resolve, reject) => (fail = reject)));
    await turns(2);
    const after = reads.read('payment', async () => 7);
    fail(new Error('provider down'));
    await expect(failed).rejects.toThrow('provider down');
    expect(await after).toBe(7);
    expect(await reads.read('payment', async () => 8)).toBe(8);
  });
});

/** Lets `n` turns of the event loop pass. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}
