import { CircuitBreakers, type ConnectionCircuitChange } from '../../../../src/platform/provider/circuit-breakers';
import { DEFAULT_PROVIDER_CALLS } from '../../../helpers/config-defaults';

describe('the connection circuits kept per route', () => {
  it('are bounded: past 1,000 connections the oldest circuit is forgotten, and an open one is counted closed', async () => {
    const changes: ConnectionCircuitChange[] = [];
    const breakers = new CircuitBreakers(
      { ...DEFAULT_PROVIDER_CALLS.breaker, failures: 1, cooldownMs: 60_000 },
      { error: () => true, answer: (answer) => (answer as { status: number }).status >= 500 },
      undefined,
      (change) => changes.push(change),
    );
    await breakers.execute('data.tx', 'first', async () => ({ status: 503 }));
    expect(breakers.connectionState('data.tx', 'first')).toBe('open');
    for (let i = 0; i < 1_000; i += 1) await breakers.execute('data.tx', `other-${i}`, async () => ({ status: 200 }));
    expect(breakers.connectionState('data.tx', 'first')).toBe('closed');
    expect(changes).toEqual([
      { route: 'data.tx', connectionId: 'first', state: 'open', openOnRoute: 1 },
      { route: 'data.tx', connectionId: 'first', state: 'closed', openOnRoute: 0 },
    ]);
    expect(breakers.connectionState('data.tx', 'other-999')).toBe('closed');
  });

  it('keep the circuit of a connection still calling, forgetting the one used longest ago instead', async () => {
    const changes: ConnectionCircuitChange[] = [];
    const breakers = new CircuitBreakers(
      { ...DEFAULT_PROVIDER_CALLS.breaker, failures: 1, cooldownMs: 60_000 },
      { error: () => true, answer: (answer) => (answer as { status: number }).status >= 500 },
      undefined,
      (change) => changes.push(change),
    );
    await breakers.execute('data.tx', 'first', async () => ({ status: 503 }));
    for (let i = 0; i < 999; i += 1) await breakers.execute('data.tx', `other-${i}`, async () => ({ status: 200 }));
    await expect(breakers.execute('data.tx', 'first', async () => ({ status: 200 }))).rejects.toThrow();
    await breakers.execute('data.tx', 'late', async () => ({ status: 200 }));
    expect(breakers.connectionState('data.tx', 'first')).toBe('open');
    expect(changes).toEqual([{ route: 'data.tx', connectionId: 'first', state: 'open', openOnRoute: 1 }]);
  });
});
