import { Writable } from 'node:stream';
import { createLogger } from '../../src/platform/observability/logger';
import { fixtures, injectFault, user } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

/**
 * What a client sees when something goes wrong that the gateway did not raise itself, in production, over HTTP and
 * WebSocket alike: the provider answering in a shape the gateway does not expect, or with text it must not repeat.
 */
describe('error masking by origin (NODE_ENV=production)', () => {
  let stack: Stack;
  let session: string;
  const lines: string[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    stack = await startStack({
      env: {
        NODE_ENV: 'production',
        PROVIDER: 'sandbox',
        IDENTITY: 'bank',
        TOKEN_ENCRYPTION_KEY: 'cd'.repeat(32),
        ALLOW_INSECURE_PUBLIC_URL: 'true',
        METRICS_TOKEN: 'metrics-token-0123456789',
      },
      gateway: { logger: createLogger('info', sink) },
    });
    session = await stack.signIn('john', 'doe');
  });

  afterEach(async () => {
    await disposeWsClients();
    await stack.sandboxJson('DELETE', '/sandbox/faults');
  });

  afterAll(async () => {
    await stack?.close();
  });

  async function overHttp(query: string): Promise<{ text: string; requestId: string | null }> {
    const response = await fetch(`${stack.gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${session}`, 'cache-control': 'no-cache' },
      body: JSON.stringify({ query }),
    });
    return { text: await response.text(), requestId: response.headers.get('x-request-id') };
  }

  async function overWs(query: string): Promise<string> {
    const ws = connectWs(stack.gateway.url, session);
    const subscription = ws.subscribe(query);
    return JSON.stringify(await subscription.next(10_000));
  }

  async function expectMaskedOnBothTransports(query: string, leaks: RegExp): Promise<void> {
    for (const text of [(await overHttp(query)).text, await overWs(query)]) {
      const body = JSON.parse(text) as { errors: { message: string; extensions: { code: string } }[] };
      expect(text).not.toMatch(leaks);
      expect(body.errors[0]).toMatchObject({ message: expect.stringContaining('request id'), extensions: { code: 'INTERNAL_SERVER_ERROR' } });
    }
  }

  it('hides a TypeError from a provider list holding null', async () => {
    await injectFault(stack, { match: 'GET /data/v1/accounts', body: { results: [null] } });
    await expectMaskedOnBothTransports('{ viewer { accounts { id } } }', /Cannot read|account_id|properties of null/);
  });

  it('hides a scalar refusing a provider timestamp that quotes a secret', async () => {
    const account = user(await fixtures(stack), 'john').accounts[0]!.account;
    await injectFault(stack, {
      match: 'GET /data/v1/accounts',
      body: { results: [{ ...account, update_timestamp: 'internal-ref sk_live_4eC39HqLyjWDarjtT1zdp7dc' }] },
    });
    await expectMaskedOnBothTransports('{ viewer { accounts { id updatedAt } } }', /sk_live|internal-ref|DateTime cannot/);
  });

  it('gives the provider’s slug, never its text, and logs the text under the request id', async () => {
    await injectFault(stack, {
      match: 'GET /data/v1/accounts',
      status: 400,
      body: { error: 'invalid_request', error_description: 'db password=hunter2 host=10.0.3.7' },
    });
    const { text, requestId } = await overHttp('{ viewer { accounts { id } } }');
    expect(text).not.toMatch(/hunter2|10\.0\.3\.7|password/);
    const body = JSON.parse(text) as { errors: { extensions: Record<string, unknown> }[] };
    expect(body.errors[0]!.extensions).toMatchObject({ providerError: 'invalid_request', requestId });
    const logged = await waitFor(() => lines.find((line) => line.includes(requestId!) && line.includes('10.0.3.7')), 'the provider text in the log');
    expect(JSON.parse(logged)).toMatchObject({ requestId });
  });
});
