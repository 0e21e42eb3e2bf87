import { randomUUID } from 'node:crypto';
import { isValidIban } from '../../src/sandbox/fixtures/bank-details';
import { createSandbox, type Sandbox } from '../../src/sandbox/sandbox';
import { getAppToken, getUserToken } from '../helpers/sandbox-auth';
import { callSandbox, createTestSigningKey, registration, send, signRequest, type HttpResult } from '../helpers/sandbox-signing';

const key = createTestSigningKey('withdrawals-test-key');
const PROBLEM = 'https://docs.truelayer.com/docs/error-types#';
const WITHDRAWAL_FIELDS = [
  'transaction_id',
  'authorised_at',
  'submitted_at',
  'settled_at',
  'rejected_at',
  'failed_at',
  'beneficiary_name',
  'beneficiary_iban',
  'beneficiary_reference',
  'amount_in_minor',
  'currency',
  'status',
  'context_code',
];

interface LoggedCall {
  method: string;
  path: string;
  startedMs: number;
  endedMs: number;
}

let sandbox: Sandbox;
let token: string;

beforeEach(async () => {
  sandbox = await createSandbox({ port: 0, signingKeys: [registration(key)] });
  token = (await getAppToken(sandbox, 'paydirect')).access_token;
});

afterEach(async () => {
  await sandbox?.close();
});

function withdrawalBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    transaction_id: randomUUID(),
    beneficiary_name: 'Amelia Hartley',
    beneficiary_iban: 'GB33BUKB20201555555555',
    beneficiary_reference: 'Winnings 0042',
    currency: 'GBP',
    amount_in_minor: 2500,
    context_code: 'withdrawal',
    ...overrides,
  };
}

function createWithdrawal(body: unknown, bearer = token): Promise<HttpResult> {
  return callSandbox(sandbox.url, { method: 'POST', path: '/v1/withdrawals', token: bearer, body, sign: { key, header: 'X-SVC-Signature' } });
}

/** `bearer` null: no Authorization header. */
function getWithdrawal(transactionId: string, bearer: string | null = token): Promise<HttpResult> {
  return callSandbox(sandbox.url, { method: 'GET', path: `/v1/withdrawals/${transactionId}`, token: bearer ?? undefined });
}

async function advance(seconds: number): Promise<void> {
  const result = await callSandbox(sandbox.url, { method: 'POST', path: '/sandbox/clock', body: { advanceSeconds: seconds } });
  expect(result.status).toBe(200);
}

async function ledgerWithdrawals(): Promise<{ id: string; amount_in_minor: number }[]> {
  return (await callSandbox(sandbox.url, { method: 'GET', path: '/sandbox/ledger' })).body.withdrawals;
}

function expectProblem(result: HttpResult, status: number, slug: string): void {
  expect(result.status).toBe(status);
  expect(result.headers.get('content-type')).toBe('application/problem+json');
  expect(result.body).toMatchObject({ type: PROBLEM + slug, status });
  expect(typeof result.body.detail).toBe('string');
  expect(typeof result.body.trace_id).toBe('string');
}

describe('POST /v1/withdrawals', () => {
  it('answers 202 with the withdrawal authorised, and records it in the ledger', async () => {
    const body = withdrawalBody();
    expect(isValidIban(body.beneficiary_iban as string)).toBe(true);
    const before = sandbox.context.clock.nowMs();
    const result = await createWithdrawal(body);

    expect(result.status).toBe(202);
    expect(Object.keys(result.body)).toEqual(['result']);
    const withdrawal = result.body.result;
    expect(Object.keys(withdrawal)).toEqual(WITHDRAWAL_FIELDS);
    expect(withdrawal).toMatchObject({
      ...body,
      status: 'authorised',
      submitted_at: null,
      settled_at: null,
      rejected_at: null,
      failed_at: null,
    });
    const authorisedAt = Date.parse(withdrawal.authorised_at);
    expect(authorisedAt).toBeGreaterThanOrEqual(before);
    expect(authorisedAt).toBeLessThanOrEqual(sandbox.context.clock.nowMs());

    expect(await ledgerWithdrawals()).toEqual([
      { kind: 'withdrawal', id: body.transaction_id, amount_in_minor: 2500, currency: 'GBP', created_at: withdrawal.authorised_at },
    ]);
  });

  it('accepts EUR and an IBAN of another country', async () => {
    const result = await createWithdrawal(withdrawalBody({ currency: 'EUR', beneficiary_iban: 'DE89370400440532013000', amount_in_minor: 1 }));
    expect(result.status).toBe(202);
    expect(result.body.result).toMatchObject({ currency: 'EUR', beneficiary_iban: 'DE89370400440532013000', amount_in_minor: 1 });
  });

  describe('validation: 400 invalid-parameters naming the field', () => {
    const cases: [string, string, unknown][] = [
      ['transaction_id', 'missing', undefined],
      ['transaction_id', 'not a UUID', 'withdrawal-1'],
      ['transaction_id', 'a number', 42],
      ['beneficiary_name', 'missing', undefined],
      ['beneficiary_name', 'empty', ''],
      ['beneficiary_name', 'blank', '   '],
      ['beneficiary_name', 'not a string', 7],
      ['beneficiary_iban', 'missing', undefined],
      ['beneficiary_iban', 'wrong check digits', 'GB34BUKB20201555555555'],
      ['beneficiary_iban', 'not an IBAN', 'hello world'],
      ['beneficiary_iban', 'too short', 'GB82WEST1234'],
      ['beneficiary_reference', 'missing', undefined],
      ['beneficiary_reference', 'empty', ''],
      ['beneficiary_reference', '19 characters', 'ABCDEFGHIJKLMNOPQRS'],
      ['currency', 'missing', undefined],
      ['currency', 'unsupported', 'USD'],
      ['currency', 'lower case', 'gbp'],
      ['amount_in_minor', 'missing', undefined],
      ['amount_in_minor', 'zero', 0],
      ['amount_in_minor', 'negative', -100],
      ['amount_in_minor', 'fractional', 12.5],
      ['amount_in_minor', 'a string', '2500'],
      ['amount_in_minor', 'beyond a safe integer', 2 ** 53],
      ['context_code', 'missing', undefined],
      ['context_code', 'another value', 'payout'],
    ];

    it.each(cases)('%s %s', async (field, _case, value) => {
      const body = withdrawalBody();
      if (value === undefined) delete body[field];
      else body[field] = value;
      const result = await createWithdrawal(body);
      expectProblem(result, 400, 'invalid-parameters');
      expect(Object.keys(result.body.errors)).toEqual([field]);
      expect(result.body.errors[field][0]).toMatch(/must|required/);
      expect(await ledgerWithdrawals()).toEqual([]);
    });

    it('lists every field at once when the body is empty', async () => {
      const result = await createWithdrawal({});
      expectProblem(result, 400, 'invalid-parameters');
      expect(Object.keys(result.body.errors).sort()).toEqual([
        'amount_in_minor',
        'beneficiary_iban',
        'beneficiary_name',
        'beneficiary_reference',
        'context_code',
        'currency',
        'transaction_id',
      ]);
    });

    it('accepts a reference of exactly 18 characters', async () => {
      const result = await createWithdrawal(withdrawalBody({ beneficiary_reference: 'ABCDEFGHIJKLMNOPQR' }));
      expect(result.status).toBe(202);
    });

    it('refuses a body that is not a JSON object, bad JSON and a wrong content type', async () => {
      expectProblem(await createWithdrawal([withdrawalBody()]), 400, 'invalid-parameters');
      expectProblem(await createWithdrawal('{"transaction_id": '), 400, 'invalid-parameters');
      const asForm = await callSandbox(sandbox.url, {
        method: 'POST',
        path: '/v1/withdrawals',
        token,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'transaction_id=1',
        sign: { key, header: 'X-SVC-Signature' },
      });
      expectProblem(asForm, 400, 'invalid-parameters');
      expect(asForm.body.detail).toMatch(/application\/json/);
    });
  });

  describe('request signature (X-SVC-Signature)', () => {
    function headersFor(signature?: string): Record<string, string> {
      return {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        ...(signature === undefined ? {} : { 'X-SVC-Signature': signature }),
      };
    }

    it('refuses a request without the header', async () => {
      const bytes = JSON.stringify(withdrawalBody());
      const result = await send(sandbox.url, 'POST', '/v1/withdrawals', headersFor(), bytes);
      expectProblem(result, 401, 'invalid-signature');
      expect(result.body.detail).toMatch(/missing/);
    });

    it('refuses a body changed by one byte after signing', async () => {
      const bytes = JSON.stringify(withdrawalBody({ amount_in_minor: 2500 }));
      const signature = signRequest(key, { method: 'POST', path: '/v1/withdrawals', body: bytes });
      const tampered = bytes.replace('2500', '9500');
      const result = await send(sandbox.url, 'POST', '/v1/withdrawals', headersFor(signature), tampered);
      expectProblem(result, 401, 'invalid-signature');
      expect(result.body.detail).toMatch(/does not match/);
      expect(await ledgerWithdrawals()).toEqual([]);
    });

    it('verifies the bytes as sent, not a re-serialisation of the JSON', async () => {
      const bytes = JSON.stringify(withdrawalBody(), null, 2);
      const signature = signRequest(key, { method: 'POST', path: '/v1/withdrawals', body: bytes });
      const result = await send(sandbox.url, 'POST', '/v1/withdrawals', headersFor(signature), bytes);
      expect(result.status).toBe(202);
    });

    it('refuses a signature by a key the provider does not know', async () => {
      const stranger = createTestSigningKey('unregistered-key');
      const bytes = JSON.stringify(withdrawalBody());
      const signature = signRequest(stranger, { method: 'POST', path: '/v1/withdrawals', body: bytes });
      const result = await send(sandbox.url, 'POST', '/v1/withdrawals', headersFor(signature), bytes);
      expectProblem(result, 401, 'invalid-signature');
      expect(result.body.detail).toMatch(/unregistered-key/);
    });

    it('refuses a registered kid whose signature was made by another key', async () => {
      const impostor = createTestSigningKey(key.kid);
      const bytes = JSON.stringify(withdrawalBody());
      const signature = signRequest(impostor, { method: 'POST', path: '/v1/withdrawals', body: bytes });
      expectProblem(await send(sandbox.url, 'POST', '/v1/withdrawals', headersFor(signature), bytes), 401, 'invalid-signature');
    });

    it('refuses a signature made for another path', async () => {
      const bytes = JSON.stringify(withdrawalBody());
      const signature = signRequest(key, { method: 'POST', path: '/v1/withdrawals/other', body: bytes });
      expectProblem(await send(sandbox.url, 'POST', '/v1/withdrawals', headersFor(signature), bytes), 401, 'invalid-signature');
    });

    it('refuses a value that is not a detached JWS', async () => {
      const bytes = JSON.stringify(withdrawalBody());
      const result = await send(sandbox.url, 'POST', '/v1/withdrawals', headersFor('not-a-jws'), bytes);
      expectProblem(result, 401, 'invalid-signature');
      expect(result.body.detail).toMatch(/detached/);
    });
  });

  describe('access token', () => {
    it('refuses a request without a token with 401 unauthenticated', async () => {
      const result = await callSandbox(sandbox.url, {
        method: 'POST',
        path: '/v1/withdrawals',
        body: withdrawalBody(),
        sign: { key, header: 'X-SVC-Signature' },
      });
      expectProblem(result, 401, 'unauthenticated');
    });

    it('refuses an unknown token with 401 unauthenticated', async () => {
      expectProblem(await createWithdrawal(withdrawalBody(), 'no-such-token'), 401, 'unauthenticated');
    });

    it('refuses a client-credentials token without paydirect with 403 forbidden', async () => {
      const paymentsOnly = (await getAppToken(sandbox, 'payments')).access_token;
      const result = await createWithdrawal(withdrawalBody(), paymentsOnly);
      expectProblem(result, 403, 'forbidden');
      expect(result.body.detail).toMatch(/paydirect/);
    });

    it('refuses an end-user token from the authorization-code grant with 403 forbidden', async () => {
      const userToken = (await getUserToken(sandbox)).access_token;
      const result = await createWithdrawal(withdrawalBody(), userToken);
      expectProblem(result, 403, 'forbidden');
      expect(result.body.detail).toMatch(/client-credentials/);
    });

    it('refuses an end-user token, whatever its scopes, with 403 forbidden', async () => {
      const user = sandbox.context.fixtures.users[0]!;
      const userToken = sandbox.context.tokens.issue({
        clientId: sandbox.context.client.clientId,
        userId: user.id,
        scopes: ['info', 'accounts', 'paydirect', 'payments'],
      }).access_token;
      const result = await createWithdrawal(withdrawalBody(), userToken);
      expectProblem(result, 403, 'forbidden');
      expect(result.body.detail).toMatch(/client-credentials/);
    });

    it('refuses an expired token with 401 unauthenticated', async () => {
      await advance(3600);
      const result = await createWithdrawal(withdrawalBody());
      expectProblem(result, 401, 'unauthenticated');
      expect(result.body.detail).toMatch(/expired/);
    });
  });

  describe('idempotency by transaction_id', () => {
    it('answers a replay of the same body with the existing withdrawal, creating nothing new', async () => {
      const body = withdrawalBody();
      const first = await createWithdrawal(body);
      const again = await createWithdrawal(body);
      expect(again.status).toBe(202);
      expect(again.body).toEqual(first.body);
      expect(await ledgerWithdrawals()).toHaveLength(1);
    });

    it('answers a replay with the withdrawal as it is now', async () => {
      const body = withdrawalBody();
      await createWithdrawal(body);
      await advance(10);
      const again = await createWithdrawal(body);
      expect(again.status).toBe(202);
      expect(again.body.result.status).toBe('submitted');
    });

    it('treats the transaction_id case-insensitively', async () => {
      const body = withdrawalBody();
      await createWithdrawal(body);
      const again = await createWithdrawal({ ...body, transaction_id: (body.transaction_id as string).toUpperCase() });
      expect(again.status).toBe(202);
      expect(again.body.result.transaction_id).toBe(body.transaction_id);
      expect(await ledgerWithdrawals()).toHaveLength(1);
    });

    it('answers 422 idempotency-key-reuse for the same id with a different body, and keeps the original', async () => {
      const body = withdrawalBody();
      await createWithdrawal(body);
      const reuse = await createWithdrawal({ ...body, amount_in_minor: 9999 });
      expectProblem(reuse, 422, 'idempotency-key-reuse');
      expect(reuse.body.detail).toMatch(/amount_in_minor/);
      expect((await getWithdrawal(body.transaction_id as string)).body.result.amount_in_minor).toBe(2500);
      expect(await ledgerWithdrawals()).toHaveLength(1);
    });

    it('creates one withdrawal when five identical requests arrive at once', async () => {
      const body = withdrawalBody();
      const results = await Promise.all(Array.from({ length: 5 }, () => createWithdrawal(body)));
      expect(results.map((result) => result.status)).toEqual([202, 202, 202, 202, 202]);
      const authorisedAt = new Set(results.map((result) => result.body.result.authorised_at));
      expect(authorisedAt.size).toBe(1);
      expect(await ledgerWithdrawals()).toHaveLength(1);
      // They really were concurrent: some arrived while another was still being processed.
      const log = ((await callSandbox(sandbox.url, { method: 'GET', path: '/sandbox/requests' })).body.requests as LoggedCall[]).filter(
        (entry) => entry.method === 'POST' && entry.path === '/v1/withdrawals',
      );
      expect(log).toHaveLength(5);
      const overlapping = log.some((a, i) => log.some((b, j) => i !== j && b.startedMs >= a.startedMs && b.startedMs < a.endedMs));
      expect(overlapping).toBe(true);
    });

    it('creates one withdrawal when two different bodies with one id arrive at once', async () => {
      const body = withdrawalBody();
      const results = await Promise.all([createWithdrawal(body), createWithdrawal({ ...body, beneficiary_reference: 'Other ref' })]);
      expect(results.map((result) => result.status).sort()).toEqual([202, 422]);
      expect(await ledgerWithdrawals()).toHaveLength(1);
    });
  });

  describe('stages on sandbox time', () => {
    it('moves authorised -> submitted after 5 s -> settled after 30 s, with each stage time', async () => {
      const body = withdrawalBody();
      const created = (await createWithdrawal(body)).body.result;
      const authorisedAt = Date.parse(created.authorised_at);
      const id = body.transaction_id as string;

      await advance(4);
      expect((await getWithdrawal(id)).body.result.status).toBe('authorised');

      await advance(1);
      const submitted = (await getWithdrawal(id)).body.result;
      expect(submitted).toMatchObject({ status: 'submitted', settled_at: null, rejected_at: null, failed_at: null });
      expect(Date.parse(submitted.submitted_at)).toBe(authorisedAt + 5000);

      await advance(24);
      expect((await getWithdrawal(id)).body.result.status).toBe('submitted');

      await advance(1);
      const settled = (await getWithdrawal(id)).body.result;
      expect(settled).toMatchObject({ status: 'settled', authorised_at: created.authorised_at, rejected_at: null, failed_at: null });
      expect(Date.parse(settled.submitted_at)).toBe(authorisedAt + 5000);
      expect(Date.parse(settled.settled_at)).toBe(authorisedAt + 30_000);

      // Terminal: nothing changes later (within the token's hour).
      await advance(3000);
      expect((await getWithdrawal(id)).body.result).toEqual(settled);
    });

    it('ends a REJECT* reference rejected at the submit step', async () => {
      const body = withdrawalBody({ beneficiary_reference: 'REJECT-limit' });
      const created = (await createWithdrawal(body)).body.result;
      await advance(60);
      const rejected = (await getWithdrawal(body.transaction_id as string)).body.result;
      expect(rejected).toMatchObject({ status: 'rejected', submitted_at: null, settled_at: null, failed_at: null });
      expect(Date.parse(rejected.rejected_at)).toBe(Date.parse(created.authorised_at) + 5000);
    });

    it('ends a FAIL* reference failed after submission', async () => {
      const body = withdrawalBody({ beneficiary_reference: 'FAIL-closed-acct' });
      const created = (await createWithdrawal(body)).body.result;
      const authorisedAt = Date.parse(created.authorised_at);
      await advance(5);
      expect((await getWithdrawal(body.transaction_id as string)).body.result.status).toBe('submitted');
      await advance(60);
      const failed = (await getWithdrawal(body.transaction_id as string)).body.result;
      expect(failed).toMatchObject({ status: 'failed', settled_at: null, rejected_at: null });
      expect(Date.parse(failed.submitted_at)).toBe(authorisedAt + 5000);
      expect(Date.parse(failed.failed_at)).toBe(authorisedAt + 30_000);
    });
  });
});

describe('GET /v1/withdrawals/{transaction_id}', () => {
  it('answers {result} without a signature', async () => {
    const body = withdrawalBody();
    const created = await createWithdrawal(body);
    const result = await getWithdrawal(body.transaction_id as string);
    expect(result.status).toBe(200);
    expect(result.body).toEqual(created.body);
  });

  it('answers 404 not-found for an unknown id', async () => {
    const result = await getWithdrawal(randomUUID());
    expectProblem(result, 404, 'not-found');
  });

  it('needs an application token with paydirect', async () => {
    const body = withdrawalBody();
    await createWithdrawal(body);
    expectProblem(await getWithdrawal(body.transaction_id as string, null), 401, 'unauthenticated');
    expectProblem(await getWithdrawal(body.transaction_id as string, (await getAppToken(sandbox, 'payments')).access_token), 403, 'forbidden');
  });
});
