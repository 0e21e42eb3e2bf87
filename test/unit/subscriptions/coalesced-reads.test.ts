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
});
