import { errorCode, shouldRetry, type RetryState } from '../../../../src/platform/provider/retry-decision';

const NOW = Date.parse('2024-05-01T12:00:00.000Z');
const state: RetryState = { retryable: true, sendsLeft: 2, backoffMs: 150, retryAfterCapMs: 5_000, msLeft: undefined, nowMs: NOW };
const answer = (status: number, headers: Record<string, string> = {}) => ({ status, headers });

describe('shouldRetry', () => {
  it('retries connection failures and timeouts after the backoff, naming the code', () => {
    for (const code of ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']) {
      expect(shouldRetry({ errorCode: code }, state)).toEqual({ retry: true, waitMs: 150, reason: code });
    }
    expect(shouldRetry({ errorCode: 'ERR_INVALID_URL' }, state)).toEqual({ retry: false });
    expect(shouldRetry({ errorCode: undefined }, state)).toEqual({ retry: false });
  });

  it('retries 429 and 5xx but 501 and 505; never a 4xx', () => {
    for (const status of [429, 500, 502, 503, 504]) expect(shouldRetry(answer(status), state)).toEqual({ retry: true, waitMs: 150, reason: `http_${status}` });
    for (const status of [400, 401, 404, 409, 422, 501, 505]) expect(shouldRetry(answer(status), state)).toEqual({ retry: false });
  });

  it('never repeats a request that is not idempotent, nor one with no sends left', () => {
    expect(shouldRetry({ errorCode: 'ECONNRESET' }, { ...state, retryable: false })).toEqual({ retry: false });
    expect(shouldRetry(answer(503), { ...state, sendsLeft: 0 })).toEqual({ retry: false });
  });

  it('waits at least what Retry-After asks on 429 and 503 (seconds or a date), and gives up at once when it asks more than the cap', () => {
    expect(shouldRetry(answer(429, { 'retry-after': '2' }), state)).toEqual({ retry: true, waitMs: 2_000, reason: 'http_429' });
    expect(shouldRetry(answer(503, { 'retry-after': new Date(NOW + 3_000).toUTCString() }), state)).toEqual({ retry: true, waitMs: 3_000, reason: 'http_503' });
    expect(shouldRetry(answer(503, { 'retry-after': '0' }), state)).toEqual({ retry: true, waitMs: 150, reason: 'http_503' });
    expect(shouldRetry(answer(429, { 'retry-after': '6' }), state)).toEqual({ retry: false });
    // Only 429 and 503 carry a Retry-After worth reading.
    expect(shouldRetry(answer(502, { 'retry-after': '60' }), state)).toEqual({ retry: true, waitMs: 150, reason: 'http_502' });
  });

  it('does not make a retry whose wait would end after the operation deadline', () => {
    expect(shouldRetry({ errorCode: 'ECONNRESET' }, { ...state, msLeft: 151 })).toEqual({ retry: true, waitMs: 150, reason: 'ECONNRESET' });
    expect(shouldRetry({ errorCode: 'ECONNRESET' }, { ...state, msLeft: 150 })).toEqual({ retry: false });
    expect(shouldRetry(answer(429, { 'retry-after': '2' }), { ...state, msLeft: 1_000 })).toEqual({ retry: false });
  });
});

describe('errorCode', () => {
  it('finds a transient code among the causes, else the error’s own', () => {
    expect(errorCode(Object.assign(new Error('fetch failed'), { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }))).toBe('ECONNRESET');
    expect(errorCode(Object.assign(new Error('bad'), { code: 'ERR_X' }))).toBe('ERR_X');
    expect(errorCode(new Error('plain'))).toBeUndefined();
  });
});
