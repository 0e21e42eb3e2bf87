import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOnce } from '../helpers/build';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

const ROOT = join(__dirname, '..', '..');
const SIGTERM_MERCHANT_KEY = 'sigterm-test-merchant-key-0123456789';

/**
 * `npm start`'s entry point as `npm start` runs it (the build, then node dist/src/index.js) in production mode:
 * SIGTERM drains clients and exits 0. Not NODE_ENV=test, which would hide Apollo's own signal handling.
 */
describe('SIGTERM', () => {
  let child: ChildProcess | undefined;
  let dataDir: string;

  beforeAll(async () => {
    await buildOnce();
  }, 300_000);

  afterEach(async () => {
    await disposeWsClients();
    if (child && child.exitCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('finishes in-flight requests, closes WebSockets with 1001, and exits 0', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'bankgraph-sigterm-'));
    child = spawn(process.execPath, ['dist/src/index.js'], {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        PROVIDER: 'sandbox',
        IDENTITY: 'bank',
        LOG_LEVEL: 'info',
        PORT: '0',
        SANDBOX_PORT: '0',
        HOST: '127.0.0.1',
        STORE_URL: `sqlite://${join(dataDir, 'gateway.sqlite')}`,
        MERCHANT_KEYS: SIGTERM_MERCHANT_KEY,
        TOKEN_ENCRYPTION_KEY: 'ef'.repeat(32),
        ALLOW_INSECURE_PUBLIC_URL: 'true',
        METRICS_TOKEN: 'sigterm-test-metrics-token-0123',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));

    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the gateway did not start:\n${output}`)), 30_000);
      const check = (): void => {
        const match = /bankgraph is up: (http:\/\/\S+)\/graphql/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      };
      child!.stdout!.on('data', check);
      void exited.then(() => reject(new Error(`the gateway exited:\n${output}`)));
    });

    // An open subscription (a pending refund's updates), and a slow HTTP request (the provider is made slow for it).
    const sandboxUrl = /"sandbox":"(http:\/\/[^"]+)"/.exec(output)?.[1];
    expect(sandboxUrl).toBeDefined();
    const seeded = (await (await fetch(`${sandboxUrl}/sandbox/fixtures`)).json()) as { payments: { id: string; status: string }[] };
    const [payment, other] = seeded.payments.filter((candidate) => candidate.status === 'authorized');
    const merchant = { 'content-type': 'application/json', authorization: `Bearer ${SIGTERM_MERCHANT_KEY}` };
    const refund = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: merchant,
      body: JSON.stringify({
        query: 'mutation { refundPayment(input: { paymentId: "' + payment!.id + '", amountInMinor: 100, reference: "sigterm" }) { id } }',
      }),
    });
    expect(((await refund.json()) as { errors?: unknown }).errors).toBeUndefined();
    const ws = connectWs(url, SIGTERM_MERCHANT_KEY);
    const open = ws.subscribe(`subscription { refundUpdated(paymentId: "${payment!.id}") { id status } }`);
    expect((await open.next()).errors).toBeUndefined();

    await fetch(`${sandboxUrl}/sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ match: 'GET /v3/payments/**', latencyMs: 800, times: 1 }),
    });
    const sent = performance.now();
    const slow = fetch(`${url}/graphql`, {
      method: 'POST',
      headers: merchant,
      body: JSON.stringify({ query: `{ payment(id: "${other!.id}") { id: paymentId refunds { id } } }` }),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));

    child.kill('SIGTERM');
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ data: { payment: { id: other!.id, refunds: [] } } });
    expect(performance.now() - sent).toBeGreaterThanOrEqual(800);
    const ended = await open.ended;
    expect((ended.error as { code?: number } | undefined)?.code).toBe(1001);
    expect(await exited).toBe(0);
    expect(output).toContain('shutdown complete');
  }, 60_000);
});
