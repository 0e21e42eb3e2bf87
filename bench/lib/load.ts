import autocannon from 'autocannon';

export interface LoadOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  connections: number;
  /** Run for this long... */
  durationS?: number;
  /** ...or until this many requests completed (then maxDurationS still bounds the time). */
  amount?: number;
  /** Hard stop, whatever the run asked for: no load loop in the bench is unbounded. */
  maxDurationS: number;
  /** Every answer must be exactly this; others count as mismatches. */
  expectBody?: string;
}

export interface LoadResult {
  requests: number;
  durationS: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  mismatches: number;
  /** True when maxDurationS cut the run short. */
  cutShort: boolean;
}

/** Latencies kept for percentiles; beyond this the run is long enough that the first ones are representative. */
const MAX_SAMPLES = 2_000_000;

/**
 * Closed-loop load with autocannon: `connections` clients, each sending its next request when the last answer
 * arrived. Percentiles are computed here from every response's own time (autocannon's histogram rounds to whole
 * milliseconds, too coarse for sub-millisecond answers).
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const latencies = new Float64Array(Math.min(MAX_SAMPLES, options.amount ?? MAX_SAMPLES));
  let samples = 0;
  let finished!: (error: Error | null, result: autocannon.Result) => void;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finished = (error, result) => (error ? reject(error) : resolve(result));
  });
  // The callback form: it returns the running instance (to listen to and to stop), where the promise form does not.
  const instance = autocannon(
    {
      url: options.url,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...options.headers },
      body: options.body,
      connections: options.connections,
      pipelining: 1,
      timeout: 30,
      ...(options.amount === undefined ? { duration: options.durationS ?? 1 } : { amount: options.amount }),
      ...(options.expectBody === undefined ? {} : { expectBody: options.expectBody }),
    },
    (error, result) => finished(error, result),
  );
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300 && samples < latencies.length) latencies[samples++] = responseTime;
  });
  let cutShort = false;
  const guard = setTimeout(() => {
    cutShort = true;
    instance.stop();
  }, options.maxDurationS * 1000);
  try {
    const result = await done;
    const sorted = latencies.subarray(0, samples).sort();
    const requests = result.requests.total;
    const durationS = result.duration;
    return {
      requests,
      durationS,
      requestsPerSecond: durationS > 0 ? requests / durationS : 0,
      p50Ms: percentile(sorted, 0.5),
      p99Ms: percentile(sorted, 0.99),
      errors: result.errors,
      timeouts: result.timeouts,
      non2xx: result.non2xx,
      mismatches: result.mismatches,
      cutShort,
    };
  } finally {
    clearTimeout(guard);
  }
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/** A load run is only a measurement if every answer was the expected one. */
export function assertClean(result: LoadResult, what: string): void {
  const bad = result.errors + result.non2xx + result.mismatches;
  if (bad > 0 || result.requests === 0) {
    throw new Error(
      `${what}: ${result.requests} requests with ${result.errors} errors (${result.timeouts} timeouts), ${result.non2xx} non-2xx and ${result.mismatches} unexpected bodies`,
    );
  }
}
