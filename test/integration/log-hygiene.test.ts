import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/platform/observability/logger';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import { CREATE_PAYOUT, fixtures, ibanOf, injectFault, paymentsIn, REFUND_PAYMENT, user, VERIFY } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

/**
 * Every log line the gateway writes while it is used the ways the suite uses it — signing in, queries, payouts,
 * refunds, provider failures, bad credentials, WebSockets, webhooks — captured at the most verbose level, then
 * searched for every credential and account number the run handled. None may appear.
 */
describe('what the logs hold', () => {
  let stack: Stack;
  let seeded: Fixtures;
  const lines: string[] = [];
  const secrets = new Map<string, string>();
  let logger: Logger;

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    logger = createLogger('trace', sink);
    stack = await startStack({ gateway: { logger } });
    seeded = await fixtures(stack);
  });

  afterAll(async () => {
    await disposeWsClients();
    await stack?.close();
  });

  it('exercises the gateway the ways the suite does', async () => {
    const john = await stack.signIn('john', 'doe');
    const jane = await stack.signIn('jane', 'doe');
    secrets.set('session token (john)', john);
    secrets.set('session token (jane)', jane);
    secrets.set('merchant key', stack.merchantKey);
    secrets.set('client secret', stack.config.provider.clientSecret);
    // A line from the middle of the signing key's PEM: the key in any form.
    const pemLines = stack.config.provider.signingKey.privateKeyPem.split('\n').filter((line) => line.length > 40 && !line.startsWith('-----'));
    secrets.set('signing key', pemLines[Math.floor(pemLines.length / 2)]!);
    for (const [name, token] of [['john', john] as const, ['jane', jane] as const]) {
      const session = await stack.gateway.features.identity.sessions.get(token);
      const [connection] = await stack.gateway.features.identity.connections.connectionsOf(session!.userId);
      const tokens = await stack.gateway.features.identity.connections.tokens(connection!.id);
      secrets.set(`provider access token (${name})`, tokens!.accessToken);
      secrets.set(`provider refresh token (${name})`, tokens!.refreshToken);
    }

    // Queries, with and without the cache, and with every kind of bad credential.
    await stack.graphql('query ViewerGraph { viewer { accounts { id accountNumber { iban } balance { current } } cards { id } } }', {}, john, {
      'cache-control': 'no-cache',
    });
    await stack.graphql('{ viewer { accounts { id } } }', {}, jane);
    await stack.graphql('{ viewer { accounts { id } } }', {}, `${john}x`);
    await stack.graphql('{ viewer { accounts { id } } }', {}, undefined, { authorization: `Basic ${Buffer.from(`john:${john}`).toString('base64')}` });
    await stack.graphql('{ viewer { accounts { id } } }', {}, undefined, { cookie: `bankgraph_session=${jane}` });
    await stack.graphql('{ viewer { acounts { id } } }', {}, john);

    // Money: a verification, a payout to the verified IBAN, a refund with the merchant key.
    const johnIban = ibanOf(user(seeded, 'john'));
    await stack.graphql(VERIFY, { name: 'John Doe' }, john);
    const input = {
      transactionId: randomUUID(),
      amountInMinor: 150,
      currency: 'GBP',
      beneficiaryIban: johnIban,
      beneficiaryName: 'John Doe',
      beneficiaryReference: 'log test',
    };
    await stack.graphql(CREATE_PAYOUT, { input }, john);
    // The same again with the provider refusing: its error body, which quotes the request, reaches the log only.
    await injectFault(stack, { match: 'POST /v1/withdrawals', status: 400, times: 1 });
    await stack.graphql(CREATE_PAYOUT, { input: { ...input, transactionId: randomUUID() } }, john);
    await injectFault(stack, { match: 'POST /v1/withdrawals', status: 500, times: 3 });
    await stack.graphql(CREATE_PAYOUT, { input: { ...input, transactionId: randomUUID() } }, john);
    const [settled] = paymentsIn(seeded, 'settled');
    await stack.graphql(REFUND_PAYMENT, { input: { paymentId: settled!.id, amountInMinor: 1, reference: 'log test' } }, stack.merchantKey);
    await injectFault(stack, { match: 'GET /data/v1/accounts/*/balance', status: 503, times: 10 });
    await stack.graphql('{ viewer { accounts { balance { current } } } }', {}, john, { 'cache-control': 'no-cache' });
    await injectFault(stack, { match: 'GET /data/v1/accounts', malformed: true, times: 3 });
    await stack.graphql('{ viewer { accounts { id } } }', {}, jane, { 'cache-control': 'no-cache' });
    await stack.sandboxJson('DELETE', '/sandbox/faults');

    // A WebSocket, authenticated by connectionParams.
    const ws = connectWs(stack.gateway.url, john);
    const live = ws.subscribe('{ viewer { accounts { id accountNumber { iban } } } }');
    await live.next();
    await ws.dispose();

    // Webhooks with forged signatures, and a data webhook whose path is a task's secret.
    const forged = 'eyJhbGciOiJFUzUxMiIsImtpZCI6ImtleSJ9..c2lnbmF0dXJl';
    await fetch(`${stack.gateway.url}/webhooks/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'tl-signature': forged },
      body: '{"type":"refund_executed"}',
    });
    const dataSecret = `task-secret-${randomUUID()}`;
    secrets.set('data webhook token', dataSecret);
    await fetch(`${stack.gateway.url}/webhooks/data/${dataSecret}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'tl-signature': forged },
      body: '{}',
    });

    // The sign-in flow's own secrets: the authorization code and state travel in the callback URL.
    await fetch(`${stack.gateway.url}/auth/callback?code=some-authorization-code-0123456789&state=forged-state-0123456789`);
    secrets.set('authorization code', 'some-authorization-code-0123456789');

    // Any text that quotes the merchant key, however short (the opaque-token rule needs 32 characters): the
    // gateway has the logger it was given mask its configured keys literally.
    logger.child({ component: 'test' }).warn({ detail: `a client pasted ${stack.merchantKey} into a field` }, `pasted ${stack.merchantKey}`);

    expect(lines.length).toBeGreaterThan(20);
  });

  it('holds no token, secret, key or full IBAN', () => {
    const log = lines.join('\n');
    const found = [...secrets].filter(([, value]) => log.includes(value)).map(([name]) => name);
    expect(found).toEqual([]);

    const ibans = seeded.users
      .flatMap((person) => person.accounts.map((account) => account.account.account_number.iban))
      .filter((iban): iban is string => Boolean(iban));
    expect(ibans.length).toBeGreaterThan(3);
    expect(ibans.filter((iban) => log.includes(iban))).toEqual([]);
    expect(log).not.toMatch(/-----BEGIN [A-Z ]*PRIVATE KEY-----/);
    expect(log).not.toMatch(/Bearer (?!\[redacted\])\S/);
  });

  it('writes one line per GraphQL operation, with request id, principal, operation name, duration and outcome', () => {
    const operations = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === 'graphql operation');
    expect(operations.length).toBeGreaterThanOrEqual(12);
    for (const entry of operations) {
      expect(entry).toMatchObject({
        level: 'info',
        requestId: expect.any(String),
        principal: expect.any(String),
        transport: expect.stringMatching(/^(http|ws)$/),
        durationMs: expect.any(Number),
        outcome: expect.any(String),
      });
    }
    expect(operations.find((entry) => entry.operationName === 'ViewerGraph')).toMatchObject({
      transport: 'http',
      operationType: 'query',
      outcome: 'success',
      principal: expect.stringMatching(/^user_/),
      status: 200,
    });
    expect(operations.find((entry) => entry.operationName === 'RefundPayment')).toMatchObject({ principal: 'merchant-1', operationType: 'mutation' });
    expect(operations.some((entry) => entry.principal === 'invalid')).toBe(true);
    expect(operations.some((entry) => entry.transport === 'ws' && entry.outcome === 'success')).toBe(true);
    // The provider's failures are in the log, under the request id the client got.
    expect(lines.some((line) => line.includes('provider error behind a client error'))).toBe(true);
  });
});
