import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { JwksKeyCache, JwksUnavailableError } from '../../../src/webhooks/jwks-cache';
import { WebhookVerifier } from '../../../src/webhooks/webhook-verifier';
import { signJws, toJwk } from '../../../src/sandbox/signing';
import { DEFAULT_WEBHOOKS } from '../../helpers/config-defaults';

const JKU = 'https://provider.example/.well-known/jwks';

function p521(): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: 'P-521' });
}

describe('JwksKeyCache', () => {
  let now = 0;
  const first = p521();
  const second = p521();
  let published: Record<string, unknown>[];
  let fetches: string[];
  let cache: JwksKeyCache;

  beforeEach(() => {
    now = 1_000_000;
    // jose reads its cool-down against Date.now: the tests move that clock instead of waiting.
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    published = [toJwk(first.publicKey, 'k1')];
    fetches = [];
    cache = new JwksKeyCache(
      [JKU],
      async (url) => {
        fetches.push(url);
        return { keys: published };
      },
      { minRefetchIntervalMs: 5_000 },
    );
  });

  afterEach(() => jest.restoreAllMocks());

  it('fetches only allow-listed addresses, exactly as listed', async () => {
    expect(await cache.keyFor('https://attacker.example/jwks', 'k1')).toBeUndefined();
    expect(await cache.keyFor(`${JKU}/`, 'k1')).toBeUndefined();
    expect(await cache.keyFor(`${JKU}?x=1`, 'k1')).toBeUndefined();
    expect(fetches).toEqual([]);
  });

  it('caches keys by kid: one fetch for any number of look-ups, concurrent ones included', async () => {
    const keys = await Promise.all([cache.keyFor(JKU, 'k1'), cache.keyFor(JKU, 'k1'), cache.keyFor(JKU, 'k1')]);
    expect(keys.every((key) => key?.equals(first.publicKey))).toBe(true);
    expect(await cache.keyFor(JKU, 'k1')).toBeDefined();
    expect(fetches).toHaveLength(1);
  });

  it('re-fetches once for an unknown kid (rotation), and not again within the interval', async () => {
    await cache.keyFor(JKU, 'k1');
    published = [toJwk(first.publicKey, 'k1'), toJwk(second.publicKey, 'k2')];
    expect(await cache.keyFor(JKU, 'k2')).toBeUndefined(); // fetched 0 s ago: not yet
    now += 5_000;
    expect((await cache.keyFor(JKU, 'k2'))?.equals(second.publicKey)).toBe(true);
    expect(fetches).toHaveLength(2);
    expect(await cache.keyFor(JKU, 'made-up-1')).toBeUndefined();
    expect(await cache.keyFor(JKU, 'made-up-2')).toBeUndefined();
    expect(fetches).toHaveLength(2);
    now += 5_000;
    expect(await cache.keyFor(JKU, 'made-up-3')).toBeUndefined();
    expect(fetches).toHaveLength(3);
  });

  it('reports an unreachable JWKS as unavailable, and keeps serving the keys it knows', async () => {
    let up = true;
    const flaky = new JwksKeyCache(
      [JKU],
      async () => {
        if (!up) throw new Error('connection refused');
        return { keys: [toJwk(first.publicKey, 'k1')] };
      },
      { minRefetchIntervalMs: 0 },
    );
    expect(await flaky.keyFor(JKU, 'k1')).toBeDefined();
    up = false;
    await expect(flaky.keyFor(JKU, 'k2')).rejects.toBeInstanceOf(JwksUnavailableError);
    expect((await flaky.keyFor(JKU, 'k1'))?.equals(first.publicKey)).toBe(true);
  });

  it('does not fetch again within the interval after a failed fetch, and answers from the next one after it', async () => {
    let up = false;
    const fetched: number[] = [];
    const recovering = new JwksKeyCache(
      [JKU],
      async () => {
        fetched.push(now);
        if (!up) throw new Error('connection refused');
        return { keys: [toJwk(first.publicKey, 'k1')] };
      },
      { minRefetchIntervalMs: 5_000 },
    );
    await expect(recovering.keyFor(JKU, 'k1')).rejects.toBeInstanceOf(JwksUnavailableError);
    up = true;
    now += 4_999;
    await expect(recovering.keyFor(JKU, 'k1')).rejects.toBeInstanceOf(JwksUnavailableError);
    expect(fetched).toHaveLength(1);
    now += 1;
    expect((await recovering.keyFor(JKU, 'k1'))?.equals(first.publicKey)).toBe(true);
    expect(fetched).toHaveLength(2);
  });

  it('keeps only ES512 signing keys with a kid', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    published = [
      toJwk(first.publicKey, 'good'),
      { ...toJwk(first.publicKey, 'enc'), use: 'enc' },
      { ...(rsa.export({ format: 'jwk' }) as object), kid: 'rsa' },
      { ...(p256.export({ format: 'jwk' }) as object), kid: 'p256' },
      { ...toJwk(first.publicKey, 'x'), kid: undefined },
      { kty: 'EC', crv: 'P-521', kid: 'broken', x: 'AA', y: 'AA' },
    ];
    expect((await cache.keyFor(JKU, 'good'))?.equals(first.publicKey)).toBe(true);
    for (const kid of ['enc', 'rsa', 'p256', 'x', 'broken']) expect(await cache.keyFor(JKU, kid)).toBeUndefined();
    const keyless = new JwksKeyCache([JKU], async () => ({}), { minRefetchIntervalMs: DEFAULT_WEBHOOKS.jwksMinRefetchIntervalMs });
    await expect(keyless.keyFor(JKU, 'good')).rejects.toBeInstanceOf(JwksUnavailableError);
  });
});

describe('WebhookVerifier', () => {
  const provider = p521();
  const path = '/webhooks/payments';
  const body = Buffer.from('{"type":"refund_executed","event_id":"e1"}');
  let now: number;
  let verifier: WebhookVerifier;

  beforeEach(() => {
    now = Date.parse('2024-05-01T12:00:00.000Z');
    const cache = new JwksKeyCache([JKU], async () => ({ keys: [toJwk(provider.publicKey, 'k1')] }), {
      minRefetchIntervalMs: DEFAULT_WEBHOOKS.jwksMinRefetchIntervalMs,
    });
    verifier = new WebhookVerifier(cache, { maxSkewMs: 5 * 60 * 1000, now: () => now });
  });

  function headersFor(options: { timestamp?: string; signedHeaders?: string[]; jku?: string; signPath?: string; signBody?: Buffer; key?: KeyObject } = {}) {
    const timestamp = options.timestamp ?? new Date(now).toISOString();
    const signature = signJws(
      { method: 'POST', path: options.signPath ?? path, headers: { 'X-Tl-Webhook-Timestamp': timestamp }, body: options.signBody ?? body },
      {
        kid: 'k1',
        privateKey: options.key ?? provider.privateKey,
        jku: options.jku ?? JKU,
        signedHeaders: options.signedHeaders ?? ['X-Tl-Webhook-Timestamp'],
      },
    );
    return { 'x-tl-webhook-timestamp': timestamp, 'tl-signature': signature };
  }

  it('accepts the provider’s signature over POST, the path, the timestamp and the raw body', async () => {
    expect(await verifier.verify({ path, headers: headersFor(), body })).toEqual({ ok: true, jku: JKU, kid: 'k1' });
  });

  it.each([
    ['no signature', { 'x-tl-webhook-timestamp': new Date().toISOString() }],
    ['a signature that is no JWS', { 'x-tl-webhook-timestamp': new Date().toISOString(), 'tl-signature': 'abc' }],
  ])('refuses %s', async (_what, headers) => {
    expect(await verifier.verify({ path, headers, body })).toMatchObject({ ok: false, status: 401 });
  });

  it('binds the signature to the path, the body and the key', async () => {
    expect(await verifier.verify({ path: '/webhooks/data/other', headers: headersFor(), body })).toMatchObject({ ok: false, status: 401 });
    expect(await verifier.verify({ path, headers: headersFor(), body: Buffer.from(`${body.toString()} `) })).toMatchObject({ ok: false, status: 401 });
    expect(await verifier.verify({ path, headers: headersFor({ key: p521().privateKey }), body })).toMatchObject({ ok: false, status: 401 });
  });

  it('refuses a jku off the allow-list, an uncovered timestamp, and a timestamp outside ±5 minutes', async () => {
    expect(await verifier.verify({ path, headers: headersFor({ jku: 'https://evil.example/jwks' }), body })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('allow-list'),
    });
    expect(await verifier.verify({ path, headers: headersFor({ signedHeaders: [] }), body })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('cover'),
    });
    const old = new Date(now - 5 * 60 * 1000 - 1).toISOString();
    const future = new Date(now + 5 * 60 * 1000 + 1).toISOString();
    expect(await verifier.verify({ path, headers: headersFor({ timestamp: old }), body })).toMatchObject({ ok: false, status: 401 });
    expect(await verifier.verify({ path, headers: headersFor({ timestamp: future }), body })).toMatchObject({ ok: false, status: 401 });
    expect(await verifier.verify({ path, headers: headersFor({ timestamp: new Date(now - 4 * 60 * 1000).toISOString() }), body })).toMatchObject({ ok: true });
    // The signed value is what counts: a fresh header over an old signature does not verify.
    const signedOld = headersFor({ timestamp: old });
    expect(await verifier.verify({ path, headers: { ...signedOld, 'x-tl-webhook-timestamp': new Date(now).toISOString() }, body })).toMatchObject({
      ok: false,
    });
  });

  it('answers 503 when the keys cannot be fetched, so the provider retries', async () => {
    const down = new WebhookVerifier(
      new JwksKeyCache(
        [JKU],
        async () => {
          throw new Error('down');
        },
        { minRefetchIntervalMs: DEFAULT_WEBHOOKS.jwksMinRefetchIntervalMs },
      ),
      { maxSkewMs: DEFAULT_WEBHOOKS.maxSkewMs, now: () => now },
    );
    expect(await down.verify({ path, headers: headersFor(), body })).toMatchObject({ ok: false, status: 503 });
  });
});
