import { createHash, randomUUID } from 'node:crypto';
import { topics } from '../../src/platform/live/topics';
import { deleteRedisKeys, redisKeys, requireRedis, REDIS_URL } from '../helpers/redis';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

/**
 * Whose allowance a request spends, and where it is kept. The bucket refills so slowly here (one token in 100 s)
 * that a test's few seconds refill none: every count is exact.
 */
const SLOW_REFILL = { RATE_LIMIT_PER_SECOND: '0.01', RATE_LIMIT_BURST: '60' };
const QUERY = 'query Count { __typename }';

/** `count` requests spread over `tokens` in turn, twenty at a time; how many were answered 200 and 429. */
async function spend(count: number, send: (index: number) => Promise<{ status: number }>): Promise<{ ok: number; limited: number }> {
  let ok = 0;
  let limited = 0;
  for (let start = 0; start < count; start += 20) {
    const answers = await Promise.all(Array.from({ length: Math.min(20, count - start) }, (_, offset) => send(start + offset)));
    for (const { status } of answers) {
      if (status === 200) ok += 1;
      else if (status === 429) limited += 1;
      else throw new Error(`unexpected HTTP ${status}`);
    }
  }
  return { ok, limited };
}

describe('the rate limit of one user', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: SLOW_REFILL });
  });
  afterAll(async () => {
    await disposeWsClients();
    await stack?.close();
  });

  it('is one allowance across all their sessions, over HTTP and WebSocket', async () => {
    const sessions = [await stack.signIn('john', 'doe'), await stack.signIn('john', 'doe'), await stack.signIn('john', 'doe')];
    const other = await stack.signIn('jane', 'doe');
    const spent = await spend(180, (index) => stack.graphql(QUERY, {}, sessions[index % 3]));
    expect(spent).toEqual({ ok: 60, limited: 120 });
    // A fresh session of the same user has no fresh allowance, over either transport.
    const fresh = await stack.signIn('john', 'doe');
    expect((await stack.graphql(QUERY, {}, fresh)).status).toBe(429);
    const ws = connectWs(stack.gateway.url, fresh);
    expect((await ws.subscribe(QUERY).next()).errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'RATE_LIMITED' });
    // Another user's allowance is their own.
    expect((await stack.graphql(QUERY, {}, other)).status).toBe(200);
  });
});

describe('the rate limit across instances sharing Redis (CACHE_URL)', () => {
  const prefix = `bankgraph-test-rate-${randomUUID().slice(0, 8)}:`;
  let a: Stack;
  let b: Stack;

  beforeAll(async () => {
    await requireRedis('The shared rate-limit tests');
    // Every count below is exact only if Redis decides every operation: on a loaded machine its answer can take
    // longer than the default 250 ms, after which an instance decides alone (by design, and not what this tests).
    const env = { ...SLOW_REFILL, CACHE_URL: REDIS_URL, RATE_LIMIT_STORE_TIMEOUT_MS: '5000', REDIS_KEY_PREFIX: prefix };
    const options = { env };
    a = await startStack(options);
    b = await startStack(options);
  });
  afterAll(async () => {
    await disposeWsClients();
    await Promise.allSettled([a?.close(), b?.close()]);
    await deleteRedisKeys(prefix);
  });

  it('is one allowance for a merchant key, whichever instance each request reaches', async () => {
    const spent = await spend(120, (index) => (index % 2 === 0 ? a : b).graphql(QUERY, {}, a.merchantKey));
    expect(spent).toEqual({ ok: 60, limited: 60 });
    // Once B has heard from Redis, its WebSockets refuse the same principal too.
    expect((await b.graphql(QUERY, {}, b.merchantKey)).status).toBe(429);
    const ws = connectWs(b.gateway.url, b.merchantKey);
    expect((await ws.subscribe(QUERY).next()).errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'RATE_LIMITED' });
  });

  it('is one allowance over WebSockets too, whichever instance each socket is on', async () => {
    // Not signed in: the principal is the client address, the same on both instances' sockets.
    const sockets = [connectWs(a.gateway.url), connectWs(b.gateway.url)];
    const spent = await spend(120, async (index) => {
      const result = await sockets[index % 2]!.subscribe(QUERY).next();
      return { status: result.errors?.[0]?.extensions?.reason === 'RATE_LIMITED' ? 429 : result.errors ? 500 : 200 };
    });
    expect(spent).toEqual({ ok: 60, limited: 60 });
  });
});

describe('two deployments on one Redis, each under its own REDIS_KEY_PREFIX', () => {
  const run = randomUUID().slice(0, 8);
  const prefixes = [`bankgraph-test-deploy-${run}-a:`, `bankgraph-test-deploy-${run}-b:`] as const;
  // A database no other test file writes to, so a scan of it sees only what deployments of this shape wrote.
  const redisUrl = `${REDIS_URL}/9`;
  const written = /^bankgraph-test-deploy-[0-9a-f]{8}-[ab]:/;
  let a: Stack;
  let b: Stack;

  beforeAll(async () => {
    await requireRedis('The REDIS_KEY_PREFIX tests');
    const env = { ...SLOW_REFILL, CACHE_URL: redisUrl, PUBSUB_URL: redisUrl, RATE_LIMIT_STORE_TIMEOUT_MS: '5000', PERSISTED_DOCUMENTS: 'allow' };
    a = await startStack({ env: { ...env, REDIS_KEY_PREFIX: prefixes[0] } });
    b = await startStack({ env: { ...env, REDIS_KEY_PREFIX: prefixes[1] } });
  });
  afterAll(async () => {
    await Promise.allSettled([a?.close(), b?.close()]);
    for (const prefix of prefixes) await deleteRedisKeys(prefix, redisUrl);
  });

  it("keeps one deployment's merchant from spending the other's allowance", async () => {
    // The same merchant key on both, as two deployments of one shop's configuration would have.
    expect(a.merchantKey).toBe(b.merchantKey);
    expect(await spend(80, () => a.graphql(QUERY, {}, a.merchantKey))).toEqual({ ok: 60, limited: 20 });
    expect(await spend(60, () => b.graphql(QUERY, {}, b.merchantKey))).toEqual({ ok: 60, limited: 0 });
  });

  it("delivers a bus event only to its own deployment's listeners", async () => {
    const topic = topics.dataTask(`task-${run}`);
    const heardByA: unknown[] = [];
    const heardByB: unknown[] = [];
    const stopA = await a.gateway.features.live.bus.listen(topic, (payload) => heardByA.push(payload));
    const stopB = await b.gateway.features.live.bus.listen(topic, (payload) => heardByB.push(payload));
    try {
      await a.gateway.features.live.bus.publish(topic, { from: 'a' });
      await waitFor(() => (heardByA.length > 0 ? true : undefined), "A's own event on A");
      // Redis delivers in the order it took the publishes: once B hears its own later event, A's would have come first.
      await b.gateway.features.live.bus.publish(topic, { from: 'b' });
      await waitFor(() => (heardByB.length > 0 ? true : undefined), "B's own event on B");
      expect(heardByB).toEqual([{ from: 'b' }]);
      expect(heardByA).toEqual([{ from: 'a' }]);
    } finally {
      await stopA();
      await stopB();
    }
  });

  it('writes every key under its prefix: rate-limit buckets, the response cache, APQ documents', async () => {
    const session = await a.signIn('john', 'doe');
    expect((await a.graphql('{ viewer { accounts { id } } }', {}, session)).errors).toBeUndefined();
    const document = `query Apq${run} { __typename }`;
    const persistedQuery = { version: 1, sha256Hash: createHash('sha256').update(document).digest('hex') };
    const registered = await fetch(`${b.gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: document, extensions: { persistedQuery } }),
    });
    expect(registered.status).toBe(200);
    const keys = await redisKeys('*', redisUrl);
    expect(keys.filter((key) => !written.test(key))).toEqual([]);
    const mine = (prefix: string, kind: string): string[] => keys.filter((key) => key.startsWith(`${prefix}${kind}`));
    expect(mine(prefixes[0], 'ratelimit:').length).toBeGreaterThan(0);
    expect(mine(prefixes[0], 'cache').length).toBeGreaterThan(0);
    expect(mine(prefixes[1], 'apq').length).toBeGreaterThan(0);
  });
});

describe('webhook deliveries', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { WEBHOOK_RATE_LIMIT_PER_SECOND: '0.01', WEBHOOK_RATE_LIMIT_BURST: '5' } });
  });
  afterAll(async () => stack?.close());

  it('are limited per source address before any signature is checked', async () => {
    const forged = 'eyJhbGciOiJFUzUxMiIsImtpZCI6ImtleSJ9..c2lnbmF0dXJl';
    const statuses: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      const answer = await fetch(`${stack.gateway.url}/webhooks/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'tl-signature': forged, 'x-tl-webhook-timestamp': new Date().toISOString() },
        body: '{"type":"refund_executed"}',
      });
      statuses.push(answer.status);
      if (answer.status === 429) {
        expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(await answer.json()).toMatchObject({ error: { code: 'FORBIDDEN', message: expect.stringContaining('webhook deliveries') } });
      } else {
        await answer.body?.cancel();
      }
    }
    expect(statuses.slice(0, 5).every((status) => status !== 429 && status >= 400)).toBe(true);
    expect(statuses.slice(5)).toEqual([429, 429, 429, 429, 429]);
    // GraphQL has an allowance of its own.
    expect((await stack.graphql(QUERY, {}, stack.merchantKey)).status).toBe(200);
  });
});
