import { ClientCredentialsTokenManager } from '../../../../src/platform/provider/token-manager';
import type { ProviderScope, ProviderTokenResponse } from '../../../../src/platform/provider/provider-types';

function fakeSource(expiresIn = 3600) {
  const calls: ProviderScope[] = [];
  let release: () => void = () => undefined;
  let gate: Promise<void> | undefined;
  return {
    calls,
    hold() {
      gate = new Promise((resolve) => (release = resolve));
    },
    release: () => release(),
    async clientCredentials(scope: ProviderScope): Promise<ProviderTokenResponse> {
      calls.push(scope);
      const n = calls.length;
      if (gate) await gate;
      return { access_token: `${scope}-token-${n}`, expires_in: expiresIn, token_type: 'Bearer', scope };
    },
  };
}

describe('ClientCredentialsTokenManager', () => {
  it('makes one token request for 20 concurrent callers', async () => {
    const source = fakeSource();
    source.hold();
    const manager = new ClientCredentialsTokenManager(source);
    const waiting = Array.from({ length: 20 }, () => manager.getToken('paydirect'));
    source.release();
    const tokens = await Promise.all(waiting);
    expect(source.calls).toEqual(['paydirect']);
    expect(new Set(tokens)).toEqual(new Set(['paydirect-token-1']));
  });

  it('caches until the margin before expiry, then fetches again', async () => {
    let now = 1_000_000;
    const source = fakeSource(3600);
    const manager = new ClientCredentialsTokenManager(source, { now: () => now, refreshMarginMs: 60_000 });
    expect(await manager.getToken('payments')).toBe('payments-token-1');
    now += 3_539_999;
    expect(await manager.getToken('payments')).toBe('payments-token-1');
    now += 1;
    expect(await manager.getToken('payments')).toBe('payments-token-2');
    expect(source.calls).toHaveLength(2);
  });

  it('keeps one token per scope', async () => {
    const source = fakeSource();
    const manager = new ClientCredentialsTokenManager(source);
    const [pay, refunds] = await Promise.all([manager.getToken('paydirect'), manager.getToken('payments')]);
    expect(pay).toBe('paydirect-token-1');
    expect(refunds).toBe('payments-token-2');
    expect(await manager.getToken('paydirect')).toBe(pay);
    expect(source.calls).toEqual(['paydirect', 'payments']);
  });

  it('renews a short-lived token halfway through its life', async () => {
    let now = 0;
    const source = fakeSource(60);
    const manager = new ClientCredentialsTokenManager(source, { now: () => now, refreshMarginMs: 60_000 });
    await manager.getToken('paydirect');
    now = 29_999;
    await manager.getToken('paydirect');
    now = 30_000;
    await manager.getToken('paydirect');
    expect(source.calls).toHaveLength(2);
  });

  it('invalidates only the token that was rejected', async () => {
    const source = fakeSource();
    const manager = new ClientCredentialsTokenManager(source);
    const first = await manager.getToken('paydirect');
    manager.invalidate('paydirect', first);
    const second = await manager.getToken('paydirect');
    expect(second).not.toBe(first);
    manager.invalidate('paydirect', first);
    expect(await manager.getToken('paydirect')).toBe(second);
    expect(source.calls).toHaveLength(2);
  });

  it('keeps a renewal in flight when the token it replaces is rejected meanwhile', async () => {
    let now = 1_000_000;
    const source = fakeSource(3600);
    const manager = new ClientCredentialsTokenManager(source, { now: () => now, refreshMarginMs: 60_000 });
    const first = await manager.getToken('payments');
    now += 3_540_000;
    source.hold();
    const renewing = manager.getToken('payments');
    manager.invalidate('payments', first);
    const joining = manager.getToken('payments');
    source.release();
    expect(await renewing).toBe('payments-token-2');
    expect(await joining).toBe('payments-token-2');
    expect(source.calls).toHaveLength(2);
  });

  it('does not cache a failure: the next caller tries again', async () => {
    let fail = true;
    const manager = new ClientCredentialsTokenManager({
      async clientCredentials(scope) {
        if (fail) throw new Error('token endpoint down');
        return { access_token: `${scope}-ok`, expires_in: 3600, token_type: 'Bearer' };
      },
    });
    await expect(Promise.all([manager.getToken('payments'), manager.getToken('payments')])).rejects.toThrow('token endpoint down');
    fail = false;
    await expect(manager.getToken('payments')).resolves.toBe('payments-ok');
  });

  it('gives requests an auth whose 401 hook drops the token', async () => {
    const source = fakeSource();
    const manager = new ClientCredentialsTokenManager(source);
    const auth = manager.authFor('paydirect');
    const token = await auth.token();
    await auth.onUnauthorized?.(token);
    expect(await auth.token()).toBe('paydirect-token-2');
  });
});
