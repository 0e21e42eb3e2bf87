import { parseSettings } from '../../../bench/lib/settings';

describe('npm run bench settings', () => {
  it('--fast-paths=off runs the fan-out with FAST_PATHS=off; on is the default', () => {
    expect(parseSettings([]).fastPaths).toBe(true);
    expect(parseSettings(['--fast-paths=on']).fastPaths).toBe(true);
    expect(parseSettings(['--only=fan-out', '--fast-paths=off']).fastPaths).toBe(false);
  });

  it('refuses any other value, saying what is accepted', () => {
    expect(() => parseSettings(['--fast-paths=maybe'])).toThrow(/\[--fast-paths=on\|off\]; got --fast-paths=maybe$/);
  });
});
