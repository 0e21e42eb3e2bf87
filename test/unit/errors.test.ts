import { BadUserInputError, ERROR_CODES, GatewayError, NotFoundError, UpstreamRateLimitedError } from '../../src/platform/errors/gateway-errors';

describe('GatewayError', () => {
  it('carries the subclass code in extensions, next to the extra extensions', () => {
    const error = new BadUserInputError('first must be at most 100, got 500', 'first');
    expect(error.extensions).toEqual({ code: 'BAD_USER_INPUT', field: 'first' });
    expect(error.code).toBe('BAD_USER_INPUT');
    expect(error).toBeInstanceOf(GatewayError);
  });

  it('uses only the documented codes', () => {
    expect(ERROR_CODES).toContain(new NotFoundError('no such payout').code);
    expect(new UpstreamRateLimitedError('slow down', 3).extensions).toEqual({ code: 'UPSTREAM_RATE_LIMITED', retryAfterSeconds: 3 });
  });
});
