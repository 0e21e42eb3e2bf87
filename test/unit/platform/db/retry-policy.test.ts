import { retryPolicy } from '../../../../src/platform/db/retry-policy';

describe('retryPolicy', () => {
  it('without jitter waits the window itself, doubling up to the cap, and throws the last error when the retries run out', async () => {
    const waits: number[] = [];
    const policy = retryPolicy((error) => error.message === 'busy', { retries: 4, initialDelayMs: 100, maxDelayMs: 300, jitter: 'none' });
    policy.onRetry(({ delay }) => waits.push(delay));
    let tries = 0;
    jest.useFakeTimers();
    try {
      const done = policy.execute(async () => {
        tries += 1;
        throw new Error('busy');
      });
      const outcome = expect(done).rejects.toThrow('busy');
      await jest.runAllTimersAsync();
      await outcome;
    } finally {
      jest.useRealTimers();
    }
    expect(tries).toBe(5);
    expect(waits).toEqual([100, 200, 300, 300]);
  });

  it('throws any other error at once', async () => {
    const policy = retryPolicy((error) => error.message === 'busy', { retries: 4, initialDelayMs: 100, maxDelayMs: 300, jitter: 'none' });
    let tries = 0;
    await expect(
      policy.execute(async () => {
        tries += 1;
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(tries).toBe(1);
  });
});
