import { ExponentialBackoff, fullJitterGenerator, handleWhen, noJitterGenerator, retry, type RetryPolicy } from 'cockatiel';

export interface RetrySettings {
  /** Tries after the first. */
  retries: number;
  /** The first retry's wait (its window, with jitter), doubled for each retry after it up to `maxDelayMs`. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** `full`: a random point of the window, so callers that collided spread out; `none`: the window itself. */
  jitter: 'full' | 'none';
}

/**
 * A cockatiel retry policy for work that may fail for a moment (a transaction that lost a race, an idempotency key
 * another request holds): errors `isRetryable` accepts are retried with exponential backoff, others are thrown at
 * once, and the last error is thrown when the retries run out.
 */
export function retryPolicy(isRetryable: (error: Error) => boolean, settings: RetrySettings): RetryPolicy {
  return retry(handleWhen(isRetryable), {
    maxAttempts: settings.retries,
    backoff: new ExponentialBackoff({
      initialDelay: settings.initialDelayMs,
      maxDelay: settings.maxDelayMs,
      generator: settings.jitter === 'full' ? fullJitterGenerator : noJitterGenerator,
    }),
  });
}
