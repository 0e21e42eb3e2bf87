import { createLogger } from '../../../../src/platform/observability/logger';
import { AsyncQueue } from '../../../../src/platform/live/async-queue';
import { MemoryEventBus, typeGraphqlPubSub } from '../../../../src/platform/live/event-bus';
import { attachValueSink, liveStream } from '../../../../src/platform/live/live-stream';
import { waitFor } from '../../../helpers/wait-for';

const logger = createLogger('silent');

/** Published after a stream whose current state is a at step 1: a repeat, a step back, one to skip, then news of a and b. */
const AFTER_STEP_1 = [
  { id: 'a', step: 1 },
  { id: 'a', step: 0 },
  { id: 'skip', step: 9 },
  { id: 'a', step: 2 },
  { id: 'b', step: 0 },
];

interface State {
  id: string;
  step: number;
}

describe('AsyncQueue', () => {
  it('ends a consumer that is waiting when return() is called, and runs its clean-up once', async () => {
    let cleanups = 0;
    const queue = new AsyncQueue<number>(10, () => {
      cleanups += 1;
    });
    const waiting = queue.next();
    await queue.return();
    await queue.return();
    await expect(waiting).resolves.toEqual({ value: undefined, done: true });
    expect(cleanups).toBe(1);
    queue.push(1);
    await expect(queue.next()).resolves.toEqual({ value: undefined, done: true });
  });

  it('drops the oldest items when the consumer falls behind', async () => {
    const queue = new AsyncQueue<number>(2);
    for (const item of [1, 2, 3, 4]) queue.push(item);
    expect(queue.droppedCount).toBe(2);
    expect((await queue.next()).value).toBe(3);
    expect((await queue.next()).value).toBe(4);
  });
});

describe('MemoryEventBus', () => {
  it('delivers JSON copies to the topic’s listeners only, until they stop listening', async () => {
    const bus = new MemoryEventBus(logger);
    const seen: unknown[] = [];
    const payload = { a: 1 };
    const stop = await bus.listen('t1', (value) => seen.push(value));
    await bus.listen('t2', () => seen.push('wrong topic'));
    await bus.publish('t1', payload);
    expect(seen).toEqual([{ a: 1 }]);
    expect(seen[0]).not.toBe(payload);
    await stop();
    await bus.publish('t1', payload);
    expect(seen).toHaveLength(1);
    expect(bus.listenedTopics).toEqual(['t2']);
  });

  it('serves type-graphql’s topic subscriptions over the same bus', async () => {
    const bus = new MemoryEventBus(logger);
    const pubSub = typeGraphqlPubSub(bus);
    const iterator = pubSub.subscribe('TOPIC', 'id1')[Symbol.asyncIterator]();
    await waitFor(() => (bus.listenedTopics.includes('TOPIC:id1') ? true : undefined), 'the listener');
    pubSub.publish('TOPIC', 'id1', { hello: 'world' });
    await expect(iterator.next()).resolves.toEqual({ value: { hello: 'world' }, done: false });
    await iterator.return!();
    expect(bus.listenedTopics).toEqual([]);
  });
});

describe('liveStream', () => {
  function stream(bus: MemoryEventBus, current: State[], options: { final?: number; onClose?: () => void } = {}) {
    return liveStream<State>({
      bus,
      topic: 'things',
      current: async () => current,
      fromEvent: (payload) => ((payload as State).id === 'skip' ? undefined : (payload as State)),
      identity: (state) => state.id,
      rank: (state) => state.step,
      isFinal: options.final === undefined ? undefined : (state) => state.step >= options.final!,
      onClose: options.onClose,
      logs: { logger },
    });
  }

  it('sends the current state first, then changes, never a state twice nor one that goes backwards', async () => {
    const bus = new MemoryEventBus(logger);
    const iterator = await stream(bus, [{ id: 'a', step: 1 }]);
    expect((await iterator.next()).value).toEqual({ id: 'a', step: 1 });
    for (const event of AFTER_STEP_1) await bus.publish('things', event);
    expect((await iterator.next()).value).toEqual({ id: 'a', step: 2 });
    expect((await iterator.next()).value).toEqual({ id: 'b', step: 0 });
    await iterator.return!();
  });

  it('misses nothing published while the current state is read', async () => {
    const bus = new MemoryEventBus(logger);
    const iterator = await liveStream<State>({
      bus,
      topic: 'things',
      current: async () => {
        await bus.publish('things', { id: 'a', step: 2 });
        return [{ id: 'a', step: 1 }];
      },
      fromEvent: (payload) => payload as State,
      identity: (state) => state.id,
      rank: (state) => state.step,
      logs: { logger },
    });
    expect((await iterator.next()).value).toEqual({ id: 'a', step: 1 });
    expect((await iterator.next()).value).toEqual({ id: 'a', step: 2 });
    await iterator.return!();
  });

  it('ends after a final state, and cleans up when the client leaves while waiting', async () => {
    const bus = new MemoryEventBus(logger);
    let closed = 0;
    const finished = await stream(bus, [{ id: 'a', step: 3 }], { final: 3, onClose: () => void (closed += 1) });
    expect((await finished.next()).value).toEqual({ id: 'a', step: 3 });
    await expect(finished.next()).resolves.toMatchObject({ done: true });
    expect(closed).toBe(1);
    expect(bus.listenedTopics).toEqual([]);

    const waiting = await stream(bus, [{ id: 'a', step: 1 }], { onClose: () => void (closed += 1) });
    await waiting.next();
    const pending = waiting.next();
    await waiting.return!();
    await expect(pending).resolves.toMatchObject({ done: true });
    expect(closed).toBe(2);
    expect(bus.listenedTopics).toEqual([]);
  });

  it('fails before acknowledging when the current state cannot be read, and stops listening', async () => {
    const bus = new MemoryEventBus(logger);
    let closed = 0;
    await expect(
      liveStream<State>({
        bus,
        topic: 'things',
        current: async () => {
          throw new Error('not found');
        },
        fromEvent: (payload) => payload as State,
        identity: (state) => state.id,
        rank: (state) => state.step,
        onClose: () => {
          closed += 1;
        },
        logs: { logger },
      }),
    ).rejects.toThrow('not found');
    expect(closed).toBe(1);
    expect(bus.listenedTopics).toEqual([]);
  });

  describe('with a value sink (direct delivery)', () => {
    it('hands events to the sink from the bus’s loop while the consumer waits, with the same rules', async () => {
      const bus = new MemoryEventBus(logger);
      const iterator = await stream(bus, [{ id: 'a', step: 1 }]);
      const sunk: State[] = [];
      expect(attachValueSink(iterator, (value) => sunk.push(value as State) > 0)).toBe(true);
      expect((await iterator.next()).value).toEqual({ id: 'a', step: 1 });
      const pending = iterator.next();
      for (const event of AFTER_STEP_1) await bus.publish('things', event);
      expect(sunk).toEqual([
        { id: 'a', step: 2 },
        { id: 'b', step: 0 },
      ]);
      // Nothing went through the iterator; it is still waiting, and ends on return().
      await iterator.return!();
      await expect(pending).resolves.toMatchObject({ done: true });
      expect(attachValueSink({}, () => true)).toBe(false);
    });

    it('sends a declined value and a final value through the iterator', async () => {
      const bus = new MemoryEventBus(logger);
      const iterator = await stream(bus, [], { final: 9 });
      attachValueSink(iterator, (value) => (value as State).id !== 'declined');
      const pending = iterator.next();
      await bus.publish('things', { id: 'declined', step: 1 });
      await expect(pending).resolves.toEqual({ value: { id: 'declined', step: 1 }, done: false });
      // Not sent twice: the iterator recorded it.
      const next = iterator.next();
      await bus.publish('things', { id: 'declined', step: 1 });
      await bus.publish('things', { id: 'a', step: 9 });
      await expect(next).resolves.toEqual({ value: { id: 'a', step: 9 }, done: false });
      await expect(iterator.next()).resolves.toMatchObject({ done: true });
    });

    it('holds later events while a delivery waits, and keeps their order whether it is delivered or declined', async () => {
      const bus = new MemoryEventBus(logger);
      const iterator = await stream(bus, []);
      const sunk: State[] = [];
      const waiting: ((delivered: boolean) => void)[] = [];
      attachValueSink(iterator, (value, done) => {
        if ((value as State).step === 1) {
          waiting.push(done);
          return undefined;
        }
        sunk.push(value as State);
        return true;
      });
      const pending = iterator.next();
      await bus.publish('things', { id: 'a', step: 1 });
      await bus.publish('things', { id: 'b', step: 2 });
      expect(sunk).toEqual([]);
      waiting.shift()!(true);
      expect(sunk).toEqual([{ id: 'b', step: 2 }]);

      // Declined after waiting: the held value goes through the iterator first, then what arrived meanwhile.
      await bus.publish('things', { id: 'c', step: 1 });
      await bus.publish('things', { id: 'd', step: 2 });
      waiting.shift()!(false);
      await expect(pending).resolves.toEqual({ value: { id: 'c', step: 1 }, done: false });
      await expect(iterator.next()).resolves.toEqual({ value: { id: 'd', step: 2 }, done: false });
      expect(sunk).toEqual([{ id: 'b', step: 2 }]);
      await iterator.return!();
    });
  });
});
