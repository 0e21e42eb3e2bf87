import { reachedOrigin, signInBase } from '../../src/identity/sign-in-origin';

describe('the address a sign-in runs on', () => {
  it('outside production, follows the loopback name the browser used, on the same port', () => {
    expect(signInBase('http://localhost:4000', '127.0.0.1:4000', false)).toBe('http://127.0.0.1:4000');
    expect(signInBase('http://127.0.0.1:4000', 'localhost:4000', false)).toBe('http://localhost:4000');
    expect(signInBase('http://localhost:4000', '[::1]:4000', false)).toBe('http://[::1]:4000');
    expect(signInBase('http://localhost:4000', 'LOCALHOST:4000', false)).toBe('http://localhost:4000');
    // PUBLIC_URL's scheme and path are kept: only the name changes.
    expect(signInBase('https://localhost:8443/gateway', '127.0.0.1:8443', false)).toBe('https://127.0.0.1:8443/gateway');
    expect(signInBase('http://localhost', '127.0.0.1', false)).toBe('http://127.0.0.1');
    expect(signInBase('http://localhost', '127.0.0.1:80', false)).toBe('http://127.0.0.1');
  });

  it('keeps PUBLIC_URL for another port, a name that is not loopback, a PUBLIC_URL that is not, or a malformed Host', () => {
    for (const host of [
      '127.0.0.1:4001',
      '127.0.0.1',
      '192.168.1.20:4000',
      'gateway.test:4000',
      'evil.example',
      undefined,
      '',
      '127.0.0.1:4000/x',
      'a@127.0.0.1:4000',
      '127.0.0.1:4000 x',
    ]) {
      expect(signInBase('http://localhost:4000', host, false)).toBe('http://localhost:4000');
    }
    expect(signInBase('https://bank.example.com', '127.0.0.1:443', false)).toBe('https://bank.example.com');
  });

  it('in production, always PUBLIC_URL: the Host header is never used', () => {
    expect(signInBase('http://localhost:4000', '127.0.0.1:4000', true)).toBe('http://localhost:4000');
    expect(signInBase('https://bank.example.com', 'localhost', true)).toBe('https://bank.example.com');
  });

  it('names where a browser reached the gateway: PUBLIC_URL’s scheme and the Host, when it is a host and nothing else', () => {
    expect(reachedOrigin('http://localhost:4000', '127.0.0.1:4000')).toBe('http://127.0.0.1:4000');
    expect(reachedOrigin('https://bank.example.com', 'bank.example.com')).toBe('https://bank.example.com');
    expect(reachedOrigin('https://bank.example.com', 'BANK.example.com:443')).toBe('https://bank.example.com');
    for (const host of [undefined, '', 'evil.example/<script>', 'a b', `${'a'.repeat(300)}.example`]) {
      expect(reachedOrigin('http://localhost:4000', host)).toBeUndefined();
    }
  });
});
