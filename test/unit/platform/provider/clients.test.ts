import { generateKeyPairSync } from 'node:crypto';
import { AuthClient } from '../../../../src/platform/provider/auth.client';
import { DataClient } from '../../../../src/platform/provider/data.client';
import { PaymentsClient } from '../../../../src/platform/provider/payments.client';
import { PayoutClient } from '../../../../src/platform/provider/payout.client';
import { verifyRequestSignature, decodeJwsHeader } from '../../../../src/platform/provider/request-signer';
import { ClientCredentialsTokenManager } from '../../../../src/platform/provider/token-manager';
import { VerificationClient } from '../../../../src/platform/provider/verification.client';
import type { ProviderWithdrawalRequest } from '../../../../src/platform/provider/provider-types';
import { BadUserInputError, NotFoundError, UnauthenticatedError } from '../../../../src/platform/errors/gateway-errors';
import { mockProvider, ORIGIN, problem, type Recorded } from '../../../helpers/mock-provider';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-521' });
const signingKey = { keyId: 'kid-1', privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() };
const user = { token: async () => 'user-token' };

let provider: ReturnType<typeof mockProvider>;
afterEach(async () => {
  await provider.close();
});

function tokenManager(auth: AuthClient): ClientCredentialsTokenManager {
  return new ClientCredentialsTokenManager(auth);
}

function expectSigned(request: Recorded, header: string, signedHeaders: string): void {
  const jws = request.headers[header.toLowerCase()]!;
  expect(decodeJwsHeader(jws)).toMatchObject({ alg: 'ES512', kid: 'kid-1', tl_version: '2', tl_headers: signedHeaders });
  const path = request.path.split('?')[0]!;
  expect(verifyRequestSignature(jws, { method: request.method, path, headers: request.headers, body: request.body }, publicKey)).toBe(true);
}

const tokenReply = (scope: string) => ({ status: 200, body: { access_token: `cc-${scope}`, expires_in: 3600, token_type: 'Bearer', scope } });

describe('AuthClient', () => {
  it('sends each grant form-encoded with the client credentials', async () => {
    provider = mockProvider();
    provider.on('POST', '/auth/connect/token', tokenReply('info accounts'), tokenReply('info accounts'), tokenReply('paydirect'));
    const auth = new AuthClient(provider.http, { authUrl: `${ORIGIN}/auth/`, clientId: 'cid', clientSecret: 'csecret' });
    await auth.exchangeCode({ code: 'c1', redirectUri: 'http://localhost:4000/auth/callback', codeVerifier: 'v1' });
    await auth.refresh('r1');
    await auth.clientCredentials('paydirect');
    const forms = provider.requests.map((r) => Object.fromEntries(new URLSearchParams(r.body.toString())));
    expect(forms).toEqual([
      {
        grant_type: 'authorization_code',
        code: 'c1',
        redirect_uri: 'http://localhost:4000/auth/callback',
        code_verifier: 'v1',
        client_id: 'cid',
        client_secret: 'csecret',
      },
      { grant_type: 'refresh_token', refresh_token: 'r1', client_id: 'cid', client_secret: 'csecret' },
      { grant_type: 'client_credentials', scope: 'paydirect', client_id: 'cid', client_secret: 'csecret' },
    ]);
    expect(provider.requests.every((r) => r.headers.authorization === undefined)).toBe(true);
  });

  it('maps invalid_grant on refresh to UNAUTHENTICATED and never retries a grant', async () => {
    provider = mockProvider();
    provider.on('POST', '/connect/token', { status: 400, body: { error: 'invalid_grant' } }, { status: 503 });
    const auth = new AuthClient(provider.http, { authUrl: ORIGIN, clientId: 'cid', clientSecret: 'csecret' });
    await expect(auth.refresh('r1')).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(auth.clientCredentials(['paydirect', 'payments'])).rejects.toMatchObject({ extensions: { code: 'UPSTREAM_UNAVAILABLE' } });
    expect(provider.requests).toHaveLength(2);
  });
});

describe('VerificationClient', () => {
  it('posts the name with the user token', async () => {
    provider = mockProvider();
    const result = { verified: true, account_holder_name: 'Jane Doe', match_score: 100, report: [] };
    provider.on('POST', '/v1/verification', { status: 200, body: result });
    const client = new VerificationClient(provider.http, { verificationUrl: ORIGIN });
    await expect(client.verify(user, 'Jane Doe', { requestId: 'r-1' })).resolves.toEqual(result);
    const [request] = provider.requests;
    expect(JSON.parse(request!.body.toString())).toEqual({ name: 'Jane Doe' });
    expect(request!.headers).toMatchObject({ authorization: 'Bearer user-token', 'x-request-id': 'r-1' });
  });
});

describe('PayoutClient', () => {
  const withdrawal: ProviderWithdrawalRequest = {
    transaction_id: '0b7f2a5e-5c1d-4c3a-9d7e-1f2a3b4c5d6e',
    beneficiary_name: 'Jane Doe',
    beneficiary_iban: 'GB33BUKB20201555555555',
    beneficiary_reference: 'Payout 1',
    currency: 'GBP',
    amount_in_minor: 1050,
    context_code: 'withdrawal',
  };
  const stored = {
    ...withdrawal,
    status: 'authorised',
    authorised_at: '2024-01-01T00:00:00.1Z',
    submitted_at: null,
    settled_at: null,
    rejected_at: null,
    failed_at: null,
  };

  function setup() {
    provider = mockProvider({ signingKey });
    provider.on('POST', '/connect/token', tokenReply('paydirect'));
    const auth = new AuthClient(provider.http, { authUrl: ORIGIN, clientId: 'cid', clientSecret: 's' });
    return new PayoutClient(provider.http, { payoutUrl: ORIGIN }, tokenManager(auth));
  }

  it('creates a signed withdrawal with the paydirect token and unwraps result', async () => {
    const client = setup();
    provider.on('POST', '/v1/withdrawals', { status: 503 }, { status: 202, body: { result: stored } });
    await expect(client.createWithdrawal(withdrawal)).resolves.toEqual(stored);
    const [token, first, second] = provider.requests;
    expect(new URLSearchParams(token!.body.toString()).get('scope')).toBe('paydirect');
    expect(first!.headers.authorization).toBe('Bearer cc-paydirect');
    expectSigned(first!, 'X-SVC-Signature', '');
    expect(second!.body.equals(first!.body)).toBe(true);
  });

  it('gets a withdrawal unsigned and maps 404', async () => {
    const client = setup();
    provider.on('GET', `/v1/withdrawals/${withdrawal.transaction_id}`, { status: 200, body: { result: stored } });
    provider.on('GET', '/v1/withdrawals/missing', { status: 404, body: problem(404, 'not-found') });
    await expect(client.getWithdrawal(withdrawal.transaction_id)).resolves.toEqual(stored);
    expect(provider.requests[1]!.headers['x-svc-signature']).toBeUndefined();
    await expect(client.getWithdrawal('missing')).rejects.toThrow(new NotFoundError('No withdrawal with that id exists at the provider.'));
  });

  it('shares one token request among 20 concurrent withdrawals lookups', async () => {
    const client = setup();
    provider.on('GET', (path) => path.startsWith('/v1/withdrawals/'), ...Array.from({ length: 20 }, () => ({ status: 200, body: { result: stored } })));
    await Promise.all(Array.from({ length: 20 }, (_, i) => client.getWithdrawal(`w${i}`)));
    expect(provider.requests.filter((r) => r.path === '/connect/token')).toHaveLength(1);
    expect(provider.requests.filter((r) => r.headers.authorization === 'Bearer cc-paydirect')).toHaveLength(20);
  });

  it('refetches the token once on a 401, then succeeds', async () => {
    const client = setup();
    provider.on('POST', '/connect/token', { status: 200, body: { access_token: 'cc-second', expires_in: 3600, token_type: 'Bearer' } });
    provider.on('GET', '/v1/withdrawals/w1', { status: 401, body: problem(401, 'unauthenticated') }, { status: 200, body: { result: stored } });
    await client.getWithdrawal('w1');
    expect(provider.requests.filter((r) => r.path.startsWith('/v1')).map((r) => r.headers.authorization)).toEqual(['Bearer cc-paydirect', 'Bearer cc-second']);
  });
});

describe('PaymentsClient', () => {
  const refund = { id: 'r1', amount_in_minor: 100, currency: 'EUR', status: 'pending', reference: 'ref', created_at: '2024-01-01T00:00:00Z' };

  function setup() {
    provider = mockProvider({ signingKey });
    provider.on('POST', '/connect/token', tokenReply('payments'));
    const auth = new AuthClient(provider.http, { authUrl: ORIGIN, clientId: 'cid', clientSecret: 's' });
    return new PaymentsClient(provider.http, { paymentsUrl: ORIGIN }, tokenManager(auth));
  }

  it('creates a refund with a signed Idempotency-Key, retrying with the same key and bytes', async () => {
    const client = setup();
    provider.on('POST', '/v3/payments/pay%2F1/refunds', { status: 500 }, { status: 202, body: { id: 'r1' } });
    await expect(client.createRefund('pay/1', { amount_in_minor: 100, reference: 'ref' }, 'idem-1')).resolves.toEqual({ id: 'r1' });
    const [, first, second] = provider.requests;
    expect(new URLSearchParams(provider.requests[0]!.body.toString()).get('scope')).toBe('payments');
    for (const request of [first!, second!]) {
      expect(request.headers['idempotency-key']).toBe('idem-1');
      expectSigned(request, 'Svc-Signature', 'Idempotency-Key');
    }
    expect(second!.body.equals(first!.body)).toBe(true);
  });

  it('signs GETs, unwraps items, and maps refund errors', async () => {
    const client = setup();
    provider.on('GET', '/v3/payments/p1/refunds/r1', { status: 200, body: refund });
    provider.on('GET', '/v3/payments/p1/refunds', { status: 200, body: { items: [refund] } });
    provider.on('POST', '/v3/payments/p1/refunds', {
      status: 400,
      body: problem(400, 'invalid-parameters', { errors: { reference: ['must be at most 18 characters'] } }),
    });
    await expect(client.getRefund('p1', 'r1')).resolves.toEqual(refund);
    await expect(client.listRefunds('p1')).resolves.toEqual([refund]);
    for (const request of provider.requests.slice(1)) expectSigned(request, 'Svc-Signature', '');
    const error = await client.createRefund('p1', { reference: 'x'.repeat(19) }, 'idem-2').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadUserInputError);
    expect((error as BadUserInputError).extensions.field).toBe('input.reference');
  });
});

describe('DataClient', () => {
  function setup() {
    provider = mockProvider();
    return new DataClient(provider.http, { dataUrl: ORIGIN });
  }

  it('calls each resource path with the user token and unwraps results keeping decimals', async () => {
    const client = setup();
    const transactions = '{"results":[{"transaction_id":"t1","amount":-2.99,"running_balance":{"amount":100.10,"currency":"GBP"}}]}';
    provider.on('GET', '/data/v1/accounts', { status: 200, body: { results: [{ account_id: 'a1' }] } });
    provider.on('GET', '/data/v1/cards', { status: 200, body: { results: [] } });
    provider.on('GET', '/data/v1/accounts/a1/transactions?from=2024-01-01&to=2024-01-31', { status: 200, body: transactions });
    provider.on('GET', '/data/v1/accounts/a1/transactions/pending', { status: 200, body: { results: [] } });
    provider.on('GET', '/data/v1/accounts/a1/balance', { status: 200, body: '{"results":[{"available":1.10,"current":1,"overdraft":0}]}' });
    provider.on('GET', '/data/v1/cards/c1/transactions', { status: 200, body: { results: [] } });
    provider.on('GET', '/data/v1/cards/c1/transactions/pending', { status: 200, body: { results: [] } });
    provider.on('GET', '/data/v1/cards/c1/balance', { status: 200, body: { results: [] } });

    expect(await client.accounts(user)).toEqual([{ account_id: 'a1' }]);
    expect(await client.cards(user)).toEqual([]);
    const [transaction] = await client.accountTransactions(user, 'a1', { from: '2024-01-01', to: '2024-01-31' });
    expect(transaction!.amount).toBe('-2.99');
    expect(transaction!.running_balance?.amount).toBe('100.10');
    await client.accountPendingTransactions(user, 'a1');
    expect((await client.accountBalance(user, 'a1'))[0]).toMatchObject({ available: '1.10', current: '1', overdraft: '0' });
    await client.cardTransactions(user, 'c1');
    await client.cardPendingTransactions(user, 'c1');
    await client.cardBalance(user, 'c1');
    expect(provider.requests).toHaveLength(8);
    expect(provider.requests.every((r) => r.headers.authorization === 'Bearer user-token' && r.headers.accept === 'application/json')).toBe(true);
  });

  it('starts async tasks and fetches results by task id', async () => {
    const client = setup();
    const ack = { results_uri: `${ORIGIN}/data/v1/results/task-1`, status: 'Queued', task_id: 'task-1' };
    provider.on('GET', (path) => path.startsWith('/data/v1/cards/c1/transactions?'), { status: 202, body: ack });
    provider.on('GET', '/data/v1/results/task-1', { status: 200, body: '{"results":[{"amount":12.50}]}' });
    provider.on('GET', '/data/v1/results/task-2', { status: 409, body: { error: 'task_not_ready' } });
    const webhook = 'https://gateway.example/webhooks/data/secret-token?x=1';
    await expect(client.startTask(user, { resource: 'cardTransactions', id: 'c1', from: '2024-02-01' }, webhook)).resolves.toEqual(ack);
    const query = new URLSearchParams(provider.requests[0]!.path.split('?')[1]);
    expect(Object.fromEntries(query)).toEqual({ from: '2024-02-01', async: 'true', webhook_uri: webhook });
    const [result] = await client.taskResults(user, 'task-1', 'cardTransactions');
    expect(result!.amount).toBe('12.50');
    await expect(client.taskResults(user, 'task-2', 'accounts')).rejects.toMatchObject({ extensions: { code: 'UPSTREAM_ERROR' } });
  });

  it('maps data-API errors', async () => {
    const client = setup();
    provider.on('GET', '/data/v1/accounts/nope/balance', { status: 404, body: { error: 'account_not_found', error_description: 'x' } });
    provider.on('GET', '/data/v1/accounts/a1/transactions?from=2024-02-01&to=2024-01-01', {
      status: 400,
      body: { error: 'invalid_date_range', error_description: 'from must not be after to' },
    });
    await expect(client.accountBalance(user, 'nope')).rejects.toBeInstanceOf(NotFoundError);
    const error = await client.accountTransactions(user, 'a1', { from: '2024-02-01', to: '2024-01-01' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadUserInputError);
    expect((error as Error).message).toBe('The date range is invalid: from must be on or before to. Correct the input and try again.');
  });
});
